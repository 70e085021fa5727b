-- A belief imported from a memory file has provenance 'imported' (PostgreSQL twin of
-- migrations/0030_imported_provenance.sql): it waits for review like any proposal and, once
-- kept, is served like 'unsourced'. Existing rows satisfy the wider check.

ALTER TABLE beliefs DROP CONSTRAINT beliefs_provenance_check;
ALTER TABLE beliefs ADD CONSTRAINT beliefs_provenance_check
  CHECK (provenance IN ('clean', 'untrusted', 'owner', 'unsourced', 'imported'));
