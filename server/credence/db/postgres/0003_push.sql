-- Push (PostgreSQL translation of migrations/0003_push.sql): browser subscriptions, the web push
-- outbox, apprise channels and their outbox.

CREATE TABLE push_subscriptions (
  id TEXT PRIMARY KEY,
  key_id TEXT NOT NULL REFERENCES api_keys(id),
  endpoint TEXT NOT NULL UNIQUE,
  p256dh TEXT NOT NULL,
  auth TEXT NOT NULL,
  -- PushSubscription.expirationTime as the browser sends it: ms since the epoch, or NULL.
  expiration_time BIGINT,
  created_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL
);
CREATE INDEX push_subscriptions_by_key ON push_subscriptions(key_id, last_seen_at);
CREATE INDEX push_subscriptions_by_seen ON push_subscriptions(last_seen_at);

-- One row per (notification, subscription). A row is claimed with a lease before it is sent;
-- a worker that dies mid-send leaves the lease to expire, and only unrecorded rows go again.
CREATE TABLE push_outbox (
  id TEXT PRIMARY KEY,
  subscription_id TEXT NOT NULL REFERENCES push_subscriptions(id) ON DELETE CASCADE,
  belief_id TEXT REFERENCES beliefs(id),
  belief_version INTEGER,
  kind TEXT NOT NULL CONSTRAINT push_outbox_kind_check CHECK (kind IN ('belief.pending', 'test')),
  payload BYTEA NOT NULL,
  topic TEXT,
  urgency TEXT NOT NULL
    CONSTRAINT push_outbox_urgency_check CHECK (urgency IN ('very-low', 'low', 'normal', 'high')),
  ttl INTEGER NOT NULL CONSTRAINT push_outbox_ttl_check CHECK (ttl >= 0),
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'queued'
    CONSTRAINT push_outbox_state_check
    CHECK (state IN ('queued', 'sent', 'failed', 'expired', 'obsolete')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  lease_owner TEXT,
  lease_until TEXT,
  sent_at TEXT,
  finished_at TEXT,
  last_status INTEGER,
  last_error TEXT
);
CREATE INDEX push_outbox_due ON push_outbox(state, next_attempt_at);
CREATE INDEX push_outbox_by_subscription ON push_outbox(subscription_id);
CREATE INDEX push_outbox_by_belief ON push_outbox(belief_id);
CREATE INDEX push_outbox_finished ON push_outbox(finished_at) WHERE finished_at IS NOT NULL;

-- apprise channels: 'env' ones mirror CREDENCE_APPRISE_URLS at start-up, 'admin' ones come
-- from the admin API. agents NULL means every agent.
CREATE TABLE push_channels (
  id TEXT PRIMARY KEY,
  source TEXT NOT NULL CONSTRAINT push_channels_source_check CHECK (source IN ('env', 'admin')),
  url TEXT NOT NULL,
  url_hash TEXT NOT NULL UNIQUE,
  masked_url TEXT NOT NULL,
  label TEXT NOT NULL DEFAULT '',
  agents TEXT,
  created_at TEXT NOT NULL
);

CREATE TABLE channel_outbox (
  id TEXT PRIMARY KEY,
  channel_id TEXT NOT NULL REFERENCES push_channels(id) ON DELETE CASCADE,
  belief_id TEXT REFERENCES beliefs(id),
  belief_version INTEGER,
  kind TEXT NOT NULL
    CONSTRAINT channel_outbox_kind_check CHECK (kind IN ('belief.pending', 'test')),
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'queued'
    CONSTRAINT channel_outbox_state_check
    CHECK (state IN ('queued', 'sent', 'failed', 'expired', 'obsolete')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  lease_owner TEXT,
  lease_until TEXT,
  sent_at TEXT,
  finished_at TEXT,
  last_error TEXT
);
CREATE INDEX channel_outbox_due ON channel_outbox(state, next_attempt_at);
CREATE INDEX channel_outbox_finished ON channel_outbox(finished_at) WHERE finished_at IS NOT NULL;
