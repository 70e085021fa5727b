-- The audit chain, one per agent from here on. Rows written before this migration keep
-- chain_version 1: one chain across every agent, verified as it always was. New rows carry
-- chain_version 2 (memory/audit.py sends it): each links to the previous version-2 row of the
-- same agent (or to the genesis hash), so appenders for different agents need no common lock
-- on PostgreSQL. seq still orders every row; the verifier walks it and checks each chain.
ALTER TABLE audit ADD COLUMN chain_version INTEGER NOT NULL DEFAULT 1;
CREATE INDEX audit_by_agent ON audit(agent_id, chain_version, seq);
