-- An agent's third-party episodes by time: an unsourced proposal is untrusted when the agent
-- stored one shortly before it (memory/provenance.UNSOURCED_WINDOW). Only untrusted rows are
-- indexed, so the index stays small and the check is one index probe.
CREATE INDEX episodes_untrusted_recent ON episodes(agent_id, created_at) WHERE origin = 'untrusted';
