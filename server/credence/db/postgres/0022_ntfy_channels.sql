-- ntfy channels: a topic URL (in url; the topic is a secret), an optional access token, and the
-- admin key that configured it (Keep and Forget from its notifications are decided as that key).
ALTER TABLE push_channels ADD COLUMN kind TEXT NOT NULL DEFAULT 'apprise';
ALTER TABLE push_channels ADD COLUMN access_token TEXT;
ALTER TABLE push_channels ADD COLUMN key_id TEXT;
