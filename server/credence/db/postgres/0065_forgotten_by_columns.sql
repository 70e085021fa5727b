-- PostgreSQL twin of migrations/0065_forgotten_by_columns.sql.
-- The machinery's facts about a forgotten belief leave forgotten_reason (now the reviewer's own
-- words only) for columns SQL can read: forgotten_by names the kept forget request that forgot
-- the belief; retired_by the kept belief that retired it without a refusal (an applied forget
-- request names itself; before 0004 a superseded belief was forgotten and names its successor).
-- Existing rows move over from the old markers, so an upgraded database answers the same.
ALTER TABLE beliefs ADD COLUMN forgotten_by TEXT REFERENCES beliefs(id);
ALTER TABLE beliefs ADD COLUMN retired_by TEXT REFERENCES beliefs(id);

UPDATE beliefs SET forgotten_by = substr(forgotten_reason, 14), forgotten_reason = NULL
WHERE substr(forgotten_reason, 1, 13) = 'forgotten_by:';
UPDATE beliefs SET retired_by = substr(forgotten_reason, 15), forgotten_reason = NULL
WHERE substr(forgotten_reason, 1, 14) = 'superseded_by:';
UPDATE beliefs SET retired_by = id, forgotten_reason = NULL
WHERE substr(forgotten_reason, 1, 15) = 'applied:forget:';

CREATE INDEX beliefs_by_forgetter ON beliefs(forgotten_by) WHERE forgotten_by IS NOT NULL;
CREATE INDEX beliefs_by_retirer ON beliefs(retired_by) WHERE retired_by IS NOT NULL;
