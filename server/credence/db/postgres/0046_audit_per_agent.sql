-- The audit chain, one per agent from here on. Rows written before this migration keep
-- chain_version 1: one chain across every agent, verified as it always was. New rows carry
-- chain_version 2: each links to the previous version-2 row of the same agent (or to the
-- genesis hash), so appenders for different agents no longer queue on one advisory lock for
-- the rest of their transaction. seq now comes from a sequence taken under the agent's lock:
-- it still orders every row, and each agent's rows in the order they were chained.
ALTER TABLE audit ADD COLUMN chain_version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE audit ALTER COLUMN chain_version SET DEFAULT 2;
CREATE INDEX audit_by_agent ON audit(agent_id, chain_version, seq);
-- Owned by the column, so `credence db copy` moves it past the copied rows like an identity.
CREATE SEQUENCE audit_seq OWNED BY audit.seq;
SELECT setval('audit_seq', coalesce((SELECT max(seq) FROM audit), 0) + 1, false);

-- Version 2 (every new row): the lock is the agent's own (class 'cr', key hashtext(agent id);
-- two agents whose ids collide merely share one). Version 1 arrives only when `credence db copy`
-- brings an older installation's chain: it extends that single chain under the old lock, and
-- only while no version-2 row follows it. A caller may still send seq, prev_hash and row_hash
-- (SQLite's rows, a copy); they must agree with what the database computes.
CREATE OR REPLACE FUNCTION audit_extend_chain() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  last_seq BIGINT;
  last_hash TEXT;
  last_version INTEGER;
  computed TEXT;
BEGIN
  IF NEW.chain_version = 1 THEN
    PERFORM pg_advisory_xact_lock(7165901438906098804);
    SELECT seq, row_hash, chain_version INTO last_seq, last_hash, last_version
      FROM audit ORDER BY seq DESC LIMIT 1;
    IF last_version = 2 THEN
      RAISE EXCEPTION 'audit rows of the single chain cannot follow per-agent rows'
        USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.seq IS NOT NULL AND NEW.seq <> coalesce(last_seq, 0) + 1 THEN
      RAISE EXCEPTION 'audit seq % does not follow the chain head %', NEW.seq, coalesce(last_seq, 0)
        USING ERRCODE = 'check_violation';
    END IF;
    NEW.seq := coalesce(last_seq, 0) + 1;
    PERFORM setval('audit_seq', NEW.seq);
  ELSIF NEW.chain_version = 2 THEN
    PERFORM pg_advisory_xact_lock(29298, hashtext(NEW.agent_id));
    SELECT seq, row_hash INTO last_seq, last_hash FROM audit
      WHERE agent_id = NEW.agent_id AND chain_version = 2 ORDER BY seq DESC LIMIT 1;
    IF NEW.seq IS NULL THEN
      NEW.seq := nextval('audit_seq');
    ELSIF NEW.seq <= coalesce(last_seq, 0) THEN
      RAISE EXCEPTION 'audit seq % does not follow the chain head %', NEW.seq, last_seq
        USING ERRCODE = 'check_violation';
    ELSE
      PERFORM setval('audit_seq', NEW.seq) WHERE NEW.seq > (SELECT last_value FROM audit_seq);
    END IF;
  ELSE
    RAISE EXCEPTION 'audit chain_version % is unknown', NEW.chain_version
      USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.prev_hash IS NOT NULL AND NEW.prev_hash <> coalesce(last_hash, repeat('0', 64)) THEN
    RAISE EXCEPTION 'audit prev_hash does not link to the chain head'
      USING ERRCODE = 'check_violation';
  END IF;
  NEW.prev_hash := coalesce(last_hash, repeat('0', 64));
  computed := audit_row_hash(NEW);
  IF NEW.row_hash IS NOT NULL AND NEW.row_hash <> computed THEN
    RAISE EXCEPTION 'audit row_hash does not match the row'
      USING ERRCODE = 'check_violation';
  END IF;
  NEW.row_hash := computed;
  RETURN NEW;
END;
$$;
