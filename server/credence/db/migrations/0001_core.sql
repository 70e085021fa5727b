-- Core store: keys, agents, episodes (+ FTS), beliefs, audit chain, idempotency, pairing.

CREATE TABLE store_state (
  name TEXT PRIMARY KEY,
  value INTEGER NOT NULL
);
INSERT INTO store_state(name, value) VALUES ('belief_changes', 0), ('key_changes', 0);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  key_hash TEXT NOT NULL UNIQUE,
  scope TEXT NOT NULL CHECK (scope IN ('admin', 'reviewer', 'agent')),
  agents TEXT,
  label TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  revoked_at TEXT
);

CREATE TABLE agents (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  roles TEXT NOT NULL DEFAULT '[]',
  settings TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE episodes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  agent_id TEXT NOT NULL REFERENCES agents(id),
  session_id TEXT NOT NULL,
  role_label TEXT,
  finished_at TEXT NOT NULL,
  summary TEXT NOT NULL,
  interventions TEXT NOT NULL DEFAULT '[]',
  intervention_text TEXT NOT NULL DEFAULT '',
  origin TEXT NOT NULL CHECK (origin IN ('clean', 'untrusted')),
  untrusted_reasons TEXT NOT NULL DEFAULT '[]',
  metadata TEXT NOT NULL DEFAULT '{}',
  redactions INTEGER NOT NULL DEFAULT 0,
  embedding BLOB,
  reflected_at TEXT,
  reflected_job TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX episodes_by_agent ON episodes(agent_id, seq);
CREATE INDEX episodes_unreflected ON episodes(agent_id, seq) WHERE reflected_at IS NULL;
CREATE INDEX episodes_by_finished ON episodes(agent_id, finished_at);

CREATE VIRTUAL TABLE episodes_fts USING fts5(
  summary, intervention_text, content='episodes', content_rowid='seq',
  tokenize='porter unicode61'
);
CREATE TRIGGER episodes_fts_insert AFTER INSERT ON episodes BEGIN
  INSERT INTO episodes_fts(rowid, summary, intervention_text)
  VALUES (new.seq, new.summary, new.intervention_text);
END;
CREATE TRIGGER episodes_fts_delete AFTER DELETE ON episodes BEGIN
  INSERT INTO episodes_fts(episodes_fts, rowid, summary, intervention_text)
  VALUES ('delete', old.seq, old.summary, old.intervention_text);
END;
CREATE TRIGGER episodes_fts_update AFTER UPDATE OF summary, intervention_text ON episodes BEGIN
  INSERT INTO episodes_fts(episodes_fts, rowid, summary, intervention_text)
  VALUES ('delete', old.seq, old.summary, old.intervention_text);
  INSERT INTO episodes_fts(rowid, summary, intervention_text)
  VALUES (new.seq, new.summary, new.intervention_text);
END;

CREATE TABLE beliefs (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL REFERENCES agents(id),
  role TEXT,
  content TEXT NOT NULL,
  content_key TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'active', 'forgotten')),
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
  last_injected_at TEXT
);
CREATE INDEX beliefs_by_status ON beliefs(agent_id, status, id);
CREATE INDEX beliefs_by_key ON beliefs(agent_id, content_key);
CREATE INDEX beliefs_all_by_status ON beliefs(status, id);

-- The structural learnability gate: untrusted text never becomes active memory by a Keep.
-- Only an Edit (which sets provenance 'owner') can activate it; no setting reaches past this.
CREATE TRIGGER beliefs_untrusted_insert BEFORE INSERT ON beliefs
WHEN new.status = 'active' AND new.provenance = 'untrusted' BEGIN
  SELECT RAISE(ABORT, 'untrusted belief cannot be active');
END;
CREATE TRIGGER beliefs_untrusted_update BEFORE UPDATE ON beliefs
WHEN new.status = 'active' AND new.provenance = 'untrusted' BEGIN
  SELECT RAISE(ABORT, 'untrusted belief cannot be active');
END;

CREATE TABLE audit (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  belief_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  action TEXT NOT NULL,
  actor TEXT NOT NULL,
  at TEXT NOT NULL,
  before_status TEXT,
  after_status TEXT NOT NULL,
  before_hash TEXT,
  after_hash TEXT NOT NULL,
  version INTEGER NOT NULL,
  detail TEXT NOT NULL DEFAULT '',
  prev_hash TEXT NOT NULL,
  row_hash TEXT NOT NULL
);
CREATE INDEX audit_by_belief ON audit(belief_id, seq);
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit BEGIN
  SELECT RAISE(ABORT, 'audit rows are append-only');
END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit BEGIN
  SELECT RAISE(ABORT, 'audit rows are append-only');
END;

CREATE TABLE idempotency (
  key_id TEXT NOT NULL,
  idem_key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  status_code INTEGER NOT NULL,
  body BLOB NOT NULL,
  headers TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  PRIMARY KEY (key_id, idem_key)
);

CREATE TABLE pairing_codes (
  code_hash TEXT PRIMARY KEY,
  agents TEXT,
  label TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  used_at TEXT,
  key_id TEXT
);
