-- The review ledger. A recipient is a reviewer, or an apprise channel (a reviewer of its own):
-- per pending belief, what it was told and when; per recipient, when the policy looks again.

CREATE TABLE review_notices (
  recipient_id TEXT NOT NULL,
  belief_id TEXT NOT NULL REFERENCES beliefs(id),
  agent_id TEXT NOT NULL,
  belief_version INTEGER NOT NULL,
  urgency TEXT NOT NULL CHECK (urgency IN ('high', 'normal', 'low')),
  -- 1: the recipient only hears of it when the agent's own reviewers let it wait (escalate_at).
  escalation INTEGER NOT NULL DEFAULT 0 CHECK (escalation IN (0, 1)),
  escalate_at TEXT,
  created_at TEXT NOT NULL,
  told_at TEXT,
  reminded_at TEXT,
  PRIMARY KEY (recipient_id, belief_id)
);
CREATE INDEX review_notices_by_belief ON review_notices(belief_id);

CREATE TABLE review_schedule (
  recipient_id TEXT PRIMARY KEY,
  due_at TEXT,
  last_push_at TEXT,
  last_reminder_at TEXT
);
CREATE INDEX review_schedule_due ON review_schedule(due_at);

ALTER TABLE push_channels ADD COLUMN notifications TEXT NOT NULL DEFAULT '{}';
