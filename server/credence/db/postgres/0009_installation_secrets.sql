-- Per-installation secrets (redaction digests, push action tokens, VAPID key) live in the
-- database, so every replica signs alike.
CREATE TABLE installation_secrets (
  name text PRIMARY KEY,
  value bytea NOT NULL,
  created_at text NOT NULL
);
