-- Bytes of episode text and vectors each agent has stored, kept up to date by every insert, so
-- the per-agent quota (CREDENCE_EPISODE_QUOTA_MB) is one row read, never a scan.
ALTER TABLE agents ADD COLUMN episode_bytes BIGINT NOT NULL DEFAULT 0;
UPDATE agents SET episode_bytes = (
  SELECT COALESCE(SUM(LENGTH(summary) + LENGTH(interventions) + LENGTH(metadata)
    + LENGTH(session_id) + COALESCE(LENGTH(role_label), 0)), 0)
  FROM episodes WHERE episodes.agent_id = agents.id
);
