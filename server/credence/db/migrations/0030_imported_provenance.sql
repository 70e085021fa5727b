-- A belief imported from a memory file (CLAUDE.md, AGENTS.md, a memory export) has provenance
-- 'imported': it waits for review like any proposal and, once kept, is served like 'unsourced'.
-- Widening the CHECK is the documented writable_schema edit, as in 0007 (existing rows satisfy
-- the wider check, and only this constraint's text changes).
PRAGMA writable_schema = ON;
UPDATE sqlite_master
SET sql = replace(
  sql,
  'provenance IN (''clean'', ''untrusted'', ''owner'', ''unsourced'')',
  'provenance IN (''clean'', ''untrusted'', ''owner'', ''unsourced'', ''imported'')'
)
WHERE type = 'table' AND name = 'beliefs';
PRAGMA writable_schema = RESET;
-- Any schema change bumps the schema cookie, so other connections re-read the schema too.
CREATE TABLE migration_0030_schema_cookie (x INTEGER);
DROP TABLE migration_0030_schema_cookie;
