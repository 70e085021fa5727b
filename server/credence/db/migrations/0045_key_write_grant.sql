-- Reviewer keys read and decide; posting episodes, turns, proposals and imports is for agent
-- keys, or for a reviewer key an admin granted it (may_write = 1). The last grant or revoke is
-- kept with the key: when (write_grant_at) and by whom (write_grant_by, an audit actor).
ALTER TABLE api_keys ADD COLUMN may_write INTEGER NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN write_grant_at TEXT;
ALTER TABLE api_keys ADD COLUMN write_grant_by TEXT;
