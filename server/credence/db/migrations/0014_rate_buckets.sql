-- Rate-limit token buckets shared by every replica on one database (PostgreSQL uses them; a
-- single SQLite process keeps its buckets in memory). One row per caller: tokens left, and the
-- wall-clock second they were counted at.
CREATE TABLE rate_buckets (
  bucket TEXT PRIMARY KEY,
  tokens REAL NOT NULL,
  at REAL NOT NULL,
  allowed INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX rate_buckets_at ON rate_buckets(at);
