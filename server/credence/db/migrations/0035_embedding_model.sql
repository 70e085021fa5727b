-- Which model made each stored embedding. Rows whose model is not the configured embedder's
-- (NULL: made before this was recorded) are re-embedded online by the backfill, one replica at
-- a time under the lease below; 'episode_reembeds' tells recall caches to reload.
ALTER TABLE beliefs ADD COLUMN embedding_model TEXT;
ALTER TABLE episodes ADD COLUMN embedding_model TEXT;
CREATE TABLE backfill_leases (
  name TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  lease_until TEXT NOT NULL
);
INSERT INTO store_state(name, value) VALUES ('episode_reembeds', 0);
