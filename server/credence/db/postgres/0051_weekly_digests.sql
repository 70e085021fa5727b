-- The last weekly report digest each reviewer was sent: the ISO week it covered (as
-- 2026-W49, in the reviewer's time zone). Claiming a week is one conditional upsert in the
-- transaction that queues the pushes, so replicas and restarts send each week once.
CREATE TABLE weekly_digests (
  reviewer_id TEXT PRIMARY KEY REFERENCES reviewers(id),
  week TEXT NOT NULL,
  sent_at TEXT NOT NULL
);
