-- Conflict resolution: a belief retired by a kept one is 'superseded' (superseded_by names it),
-- and an edited belief keeps the text it was proposed with.
-- SQLite cannot widen a CHECK in place, so the beliefs table is rebuilt the documented way (the
-- runner turns foreign keys off around a migration and checks them before COMMIT), and its
-- indexes and its triggers (untrusted Keep, change log) are recreated as they were.

CREATE TABLE beliefs_new (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL REFERENCES agents(id),
  role TEXT,
  content TEXT NOT NULL,
  content_key TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'active', 'forgotten', 'superseded')),
  confidence REAL NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
  op TEXT NOT NULL CHECK (op IN ('add', 'strengthen', 'weaken', 'forget', 'supersede')),
  target_belief_id TEXT REFERENCES beliefs(id),
  rationale TEXT NOT NULL DEFAULT '',
  source_episodes TEXT NOT NULL DEFAULT '[]',
  provenance TEXT NOT NULL CHECK (provenance IN ('clean', 'untrusted', 'owner')),
  review_reasons TEXT NOT NULL DEFAULT '[]',
  proposed_by TEXT NOT NULL DEFAULT '{}',
  version INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  decided_by TEXT,
  decided_at TEXT,
  forgotten_reason TEXT,
  embedding BLOB,
  injection_count INTEGER NOT NULL DEFAULT 0,
  last_injected_at TEXT,
  superseded_by TEXT REFERENCES beliefs(id),
  -- The proposal's own words, kept when a reviewer's first Edit replaces them: the reflector
  -- learns the reviewer's wording from (proposed_content -> content).
  proposed_content TEXT,
  CHECK ((status = 'superseded') = (superseded_by IS NOT NULL))
);
INSERT INTO beliefs_new(id, agent_id, role, content, content_key, status, confidence, op,
  target_belief_id, rationale, source_episodes, provenance, review_reasons, proposed_by, version,
  created_at, updated_at, decided_by, decided_at, forgotten_reason, embedding, injection_count,
  last_injected_at)
SELECT id, agent_id, role, content, content_key, status, confidence, op, target_belief_id,
  rationale, source_episodes, provenance, review_reasons, proposed_by, version, created_at,
  updated_at, decided_by, decided_at, forgotten_reason, embedding, injection_count,
  last_injected_at
FROM beliefs;
DROP TABLE beliefs;
ALTER TABLE beliefs_new RENAME TO beliefs;

CREATE INDEX beliefs_by_status ON beliefs(agent_id, status, id);
CREATE INDEX beliefs_by_key ON beliefs(agent_id, content_key);
CREATE INDEX beliefs_all_by_status ON beliefs(status, id);
CREATE INDEX beliefs_by_superseder ON beliefs(superseded_by) WHERE superseded_by IS NOT NULL;

-- The structural learnability gate (as in 0001): untrusted text never becomes active by a Keep.
CREATE TRIGGER beliefs_untrusted_insert BEFORE INSERT ON beliefs
WHEN new.status = 'active' AND new.provenance = 'untrusted' BEGIN
  SELECT RAISE(ABORT, 'untrusted belief cannot be active');
END;
CREATE TRIGGER beliefs_untrusted_update BEFORE UPDATE ON beliefs
WHEN new.status = 'active' AND new.provenance = 'untrusted' BEGIN
  SELECT RAISE(ABORT, 'untrusted belief cannot be active');
END;

-- The belief change log (as in 0002), now also fed by superseded_by.
CREATE TRIGGER beliefs_change_log_insert AFTER INSERT ON beliefs BEGIN
  INSERT INTO belief_change_log(agent_id, belief_id) VALUES (new.agent_id, new.id);
END;
CREATE TRIGGER beliefs_change_log_update
AFTER UPDATE OF content, status, confidence, version, embedding, created_at, updated_at,
  superseded_by
ON beliefs BEGIN
  INSERT INTO belief_change_log(agent_id, belief_id) VALUES (new.agent_id, new.id);
END;
