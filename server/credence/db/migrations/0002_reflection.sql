-- Reflection: jobs with steps and leases, wakes (cron and event), recall cache counters.

-- Counters the in-process recall cache compares to notice changes made by any process.
INSERT INTO store_state(name, value) VALUES ('episode_reflections', 0), ('episode_deletions', 0);

CREATE TRIGGER episodes_reflected_counter AFTER UPDATE OF reflected_at ON episodes
WHEN old.reflected_at IS NOT new.reflected_at BEGIN
  UPDATE store_state SET value = value + 1 WHERE name = 'episode_reflections';
END;
CREATE TRIGGER episodes_deleted_counter AFTER DELETE ON episodes BEGIN
  UPDATE store_state SET value = value + 1 WHERE name = 'episode_deletions';
END;

CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  workflow_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  trigger TEXT NOT NULL CHECK (trigger IN ('cron', 'event', 'manual')),
  window_key TEXT,
  wake_id TEXT,
  status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
  input_data TEXT NOT NULL DEFAULT '{}',
  output_data TEXT,
  error TEXT,
  -- The reflector's raw answer, stored before it is parsed or applied: a retry reuses it.
  answer TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL DEFAULT 3,
  lease_owner TEXT,
  lease_expires_at TEXT,
  heartbeat_at TEXT,
  submitted_by TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  started_at TEXT,
  finished_at TEXT,
  updated_at TEXT NOT NULL
);
-- Exactly once: one job per (workflow, agent, window), whichever process submits it first.
CREATE UNIQUE INDEX jobs_window ON jobs(workflow_id, agent_id, window_key)
  WHERE window_key IS NOT NULL;
CREATE INDEX jobs_by_status ON jobs(status, created_at);
CREATE INDEX jobs_by_agent ON jobs(agent_id, id);

CREATE TABLE job_steps (
  job_id TEXT NOT NULL REFERENCES jobs(id),
  position INTEGER NOT NULL,
  name TEXT NOT NULL CHECK (name IN ('pull', 'propose', 'check', 'submit')),
  status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed')),
  started_at TEXT,
  finished_at TEXT,
  duration_ms REAL,
  error TEXT,
  output TEXT,
  PRIMARY KEY (job_id, position)
);

CREATE TABLE wakes (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('cron', 'event')),
  workflow_id TEXT NOT NULL DEFAULT 'agent-reflection',
  cron TEXT,
  event TEXT,
  agent_ids TEXT,
  enabled INTEGER NOT NULL DEFAULT 1,
  input_data TEXT NOT NULL DEFAULT '{}',
  description TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  last_fired_at TEXT,
  CHECK ((kind = 'event') = (event IS NOT NULL))
);

INSERT INTO wakes(id, kind, cron, event, description, created_at, updated_at) VALUES
  ('reflection-nightly', 'cron', '0 3 * * *', NULL,
   'Reflect on every enabled agent at 03:00 UTC',
   strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  ('reflection-episodes-ready', 'event', NULL, 'reflection-episodes-ready',
   'Reflect when an agent reports that new episodes are ready',
   strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));

-- Which beliefs changed, in order: the reflection gate's in-process belief cache re-reads just
-- these instead of scanning every belief's version. Only columns the gate reads fire it (not
-- injection counts). Old entries are pruned; a reader that fell behind the prune rescans.
CREATE TABLE belief_change_log (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  agent_id TEXT NOT NULL,
  belief_id TEXT NOT NULL
);
CREATE INDEX belief_change_log_by_agent ON belief_change_log(agent_id, seq);
CREATE TRIGGER beliefs_change_log_insert AFTER INSERT ON beliefs BEGIN
  INSERT INTO belief_change_log(agent_id, belief_id) VALUES (new.agent_id, new.id);
END;
CREATE TRIGGER beliefs_change_log_update
AFTER UPDATE OF content, status, confidence, version, embedding, created_at, updated_at
ON beliefs BEGIN
  INSERT INTO belief_change_log(agent_id, belief_id) VALUES (new.agent_id, new.id);
END;
