-- A belief proposed without any source episode has provenance 'unsourced': it needs review and
-- is never shown as 'clean'. SQLite cannot ALTER a CHECK constraint; widening one is the
-- documented writable_schema edit (existing rows satisfy the wider check). Only this one
-- constraint's text changes, so other migrations' changes to the table survive.
PRAGMA writable_schema = ON;
UPDATE sqlite_master
SET sql = replace(
  sql,
  'provenance IN (''clean'', ''untrusted'', ''owner'')',
  'provenance IN (''clean'', ''untrusted'', ''owner'', ''unsourced'')'
)
WHERE type = 'table' AND name = 'beliefs';
PRAGMA writable_schema = RESET;
-- Any schema change bumps the schema cookie, so other connections re-read the schema too.
CREATE TABLE migration_0007_schema_cookie (x INTEGER);
DROP TABLE migration_0007_schema_cookie;
