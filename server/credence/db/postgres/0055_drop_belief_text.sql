-- PostgreSQL twin of migrations/0055_drop_belief_text.sql: the belief tsvector and its index
-- lost their last reader when context ranking moved into the live in-memory index.

DROP INDEX IF EXISTS beliefs_search;
ALTER TABLE beliefs DROP COLUMN IF EXISTS search_vector;
