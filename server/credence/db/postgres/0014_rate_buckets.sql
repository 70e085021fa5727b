-- Rate-limit token buckets shared by every replica on one database. One row per caller:
-- tokens left, and the wall-clock second (epoch) they were counted at.
CREATE TABLE rate_buckets (
  bucket text PRIMARY KEY,
  tokens double precision NOT NULL,
  at double precision NOT NULL,
  allowed integer NOT NULL DEFAULT 1
);
CREATE INDEX rate_buckets_at ON rate_buckets(at);
