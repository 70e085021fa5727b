-- What the memory-quality report and the metrics read, stored small and indexed so a report over
-- 100k decisions and a metrics scrape read indexes only: the day a belief was proposed, whether
-- a reviewer edited it, the gate's flags (1 duplicate, 2 contradiction) and the seconds from
-- proposal to decision. Triggers keep them, whatever path writes the belief.
ALTER TABLE beliefs ADD COLUMN created_day TEXT NOT NULL DEFAULT '';
ALTER TABLE beliefs ADD COLUMN edited INTEGER NOT NULL DEFAULT 0;
ALTER TABLE beliefs ADD COLUMN gate_flags INTEGER NOT NULL DEFAULT 0;
ALTER TABLE beliefs ADD COLUMN decision_s DOUBLE PRECISION;

CREATE FUNCTION beliefs_report_facts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.created_day := substr(NEW.created_at, 1, 10);
  NEW.edited := CASE WHEN NEW.proposed_content IS NULL THEN 0 ELSE 1 END;
  NEW.gate_flags := CASE WHEN NEW.review_reasons LIKE '%duplicate%' THEN 1 ELSE 0 END
    + CASE WHEN NEW.review_reasons LIKE '%contradict%' THEN 2 ELSE 0 END;
  -- A row copied from SQLite brings the seconds SQLite computed (julianday's rounding): kept,
  -- so the copy verifies value for value.
  IF NOT (TG_OP = 'INSERT' AND NEW.decision_s IS NOT NULL) THEN
    NEW.decision_s := CASE WHEN NEW.decided_at IS NULL THEN NULL
      ELSE EXTRACT(EPOCH FROM NEW.decided_at::timestamptz - NEW.created_at::timestamptz) END;
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER beliefs_report_insert BEFORE INSERT ON beliefs
FOR EACH ROW EXECUTE FUNCTION beliefs_report_facts();
CREATE TRIGGER beliefs_report_update
BEFORE UPDATE OF created_at, proposed_content, review_reasons, decided_at ON beliefs
FOR EACH ROW EXECUTE FUNCTION beliefs_report_facts();

UPDATE beliefs SET
  created_day = substr(created_at, 1, 10),
  edited = CASE WHEN proposed_content IS NULL THEN 0 ELSE 1 END,
  gate_flags = CASE WHEN review_reasons LIKE '%duplicate%' THEN 1 ELSE 0 END
    + CASE WHEN review_reasons LIKE '%contradict%' THEN 2 ELSE 0 END,
  decision_s = CASE WHEN decided_at IS NULL THEN NULL
    ELSE EXTRACT(EPOCH FROM decided_at::timestamptz - created_at::timestamptz) END;

-- The report: proposals by day and outcome; time to decision in order; who decided; kept
-- beliefs by decision time (idle ones) and by confidence (fading ones).
CREATE INDEX beliefs_report_proposed
  ON beliefs(agent_id, created_day, status, edited, gate_flags, created_at);
CREATE INDEX beliefs_report_decision_time
  ON beliefs(agent_id, decision_s, decided_at, status) WHERE decision_s IS NOT NULL;
CREATE INDEX beliefs_report_deciders ON beliefs(agent_id, decided_by, decided_at, status);
CREATE INDEX beliefs_report_kept
  ON beliefs(agent_id, status, decided_at, id, last_injected_at);
CREATE INDEX beliefs_report_confidence
  ON beliefs(agent_id, status, confidence, created_at, updated_at, id);
-- The metrics: every pending belief's agent and wait, without reading the table.
CREATE INDEX beliefs_pending_age ON beliefs(status, agent_id, updated_at);
