-- A belief proposed without any source episode has provenance 'unsourced' (PostgreSQL twin of
-- migrations/0007_unsourced_provenance.sql): it needs review and is never shown as 'clean', but
-- unlike 'untrusted' a Keep may activate it. Existing rows satisfy the wider check.

ALTER TABLE beliefs DROP CONSTRAINT beliefs_provenance_check;
ALTER TABLE beliefs ADD CONSTRAINT beliefs_provenance_check
  CHECK (provenance IN ('clean', 'untrusted', 'owner', 'unsourced'));
