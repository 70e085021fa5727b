-- Reviewers are people: a name, any number of devices (paired keys), a notification policy,
-- and per-agent routing (assignments that add to or take away from the default owners).

CREATE TABLE reviewers (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL DEFAULT '',
  -- The notification policy as JSON (mode, quiet_hours, remind_after_hours, snooze_until).
  notifications TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL
);

ALTER TABLE api_keys ADD COLUMN reviewer_id TEXT REFERENCES reviewers(id);
ALTER TABLE pairing_codes ADD COLUMN reviewer_id TEXT REFERENCES reviewers(id);
CREATE INDEX api_keys_by_reviewer ON api_keys(reviewer_id);

-- Every reviewer key paired before this migration is a person of its own.
INSERT INTO reviewers(id, name, created_at)
  SELECT 'rvw_' || substr(id, 5), '', created_at FROM api_keys WHERE scope = 'reviewer';
UPDATE api_keys SET reviewer_id = 'rvw_' || substr(id, 5) WHERE scope = 'reviewer';

-- An agent's reviewers are every reviewer whose keys cover it, plus assigned = 1 rows, minus
-- assigned = 0 rows (an admin's unassignment).
CREATE TABLE agent_reviewers (
  agent_id TEXT NOT NULL REFERENCES agents(id),
  reviewer_id TEXT NOT NULL REFERENCES reviewers(id),
  assigned INTEGER NOT NULL CHECK (assigned IN (0, 1)),
  changed_at TEXT NOT NULL,
  PRIMARY KEY (agent_id, reviewer_id)
);
