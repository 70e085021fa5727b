-- Per-installation secrets (redaction digests, push action tokens, VAPID key) live in the
-- database, so every process on it signs alike; files beside the database are adopted once.
CREATE TABLE installation_secrets (
  name TEXT PRIMARY KEY,
  value BLOB NOT NULL,
  created_at TEXT NOT NULL
);
