-- Conflict resolution (PostgreSQL twin of migrations/0004_superseded.sql): a belief retired by a
-- kept one is 'superseded' (superseded_by names it), and an edited belief keeps the text it was
-- proposed with. PostgreSQL widens the CHECK and adds the columns in place; the untrusted-Keep
-- trigger is untouched, and the change log's column list gains superseded_by.

ALTER TABLE beliefs DROP CONSTRAINT beliefs_status_check;
ALTER TABLE beliefs ADD CONSTRAINT beliefs_status_check
  CHECK (status IN ('pending', 'active', 'forgotten', 'superseded'));
ALTER TABLE beliefs ADD COLUMN superseded_by TEXT REFERENCES beliefs(id);
-- The proposal's own words, kept when a reviewer's first Edit replaces them: the reflector
-- learns the reviewer's wording from (proposed_content -> content).
ALTER TABLE beliefs ADD COLUMN proposed_content TEXT;
ALTER TABLE beliefs ADD CONSTRAINT beliefs_superseded_check
  CHECK ((status = 'superseded') = (superseded_by IS NOT NULL));
CREATE INDEX beliefs_by_superseder ON beliefs(superseded_by) WHERE superseded_by IS NOT NULL;

DROP TRIGGER beliefs_change_log_update ON beliefs;
CREATE TRIGGER beliefs_change_log_update
AFTER UPDATE OF content, status, confidence, version, embedding, created_at, updated_at,
  superseded_by
ON beliefs FOR EACH ROW EXECUTE FUNCTION beliefs_log_change();
