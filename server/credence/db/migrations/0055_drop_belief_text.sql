-- The belief full-text index (0008) lost its last reader when context ranking moved into the
-- live in-memory index; dropping it saves every belief insert and edit its trigger writes.

DROP TRIGGER IF EXISTS beliefs_fts_insert;
DROP TRIGGER IF EXISTS beliefs_fts_update;
DROP TRIGGER IF EXISTS beliefs_fts_delete;
DROP TABLE IF EXISTS beliefs_fts;
DROP TABLE IF EXISTS belief_text;
