-- What the memory-quality report and the metrics read, stored small and indexed so a report over
-- 100k decisions and a metrics scrape read indexes only: the day a belief was proposed, whether
-- a reviewer edited it, the gate's flags (1 duplicate, 2 contradiction) and the seconds from
-- proposal to decision. Triggers keep them, whatever path writes the belief.
ALTER TABLE beliefs ADD COLUMN created_day TEXT NOT NULL DEFAULT '';
ALTER TABLE beliefs ADD COLUMN edited INTEGER NOT NULL DEFAULT 0;
ALTER TABLE beliefs ADD COLUMN gate_flags INTEGER NOT NULL DEFAULT 0;
ALTER TABLE beliefs ADD COLUMN decision_s REAL;

UPDATE beliefs SET
  created_day = substr(created_at, 1, 10),
  edited = CASE WHEN proposed_content IS NULL THEN 0 ELSE 1 END,
  gate_flags = CASE WHEN review_reasons LIKE '%duplicate%' THEN 1 ELSE 0 END
    + CASE WHEN review_reasons LIKE '%contradict%' THEN 2 ELSE 0 END,
  decision_s = CASE WHEN decided_at IS NULL THEN NULL
    ELSE (julianday(decided_at) - julianday(created_at)) * 86400.0 END;

CREATE TRIGGER beliefs_report_insert AFTER INSERT ON beliefs BEGIN
  UPDATE beliefs SET
    created_day = substr(new.created_at, 1, 10),
    edited = CASE WHEN new.proposed_content IS NULL THEN 0 ELSE 1 END,
    gate_flags = CASE WHEN new.review_reasons LIKE '%duplicate%' THEN 1 ELSE 0 END
      + CASE WHEN new.review_reasons LIKE '%contradict%' THEN 2 ELSE 0 END,
    decision_s = CASE WHEN new.decided_at IS NULL THEN NULL
      ELSE (julianday(new.decided_at) - julianday(new.created_at)) * 86400.0 END
  WHERE id = new.id;
END;
CREATE TRIGGER beliefs_report_update
AFTER UPDATE OF created_at, proposed_content, review_reasons, decided_at ON beliefs BEGIN
  UPDATE beliefs SET
    created_day = substr(new.created_at, 1, 10),
    edited = CASE WHEN new.proposed_content IS NULL THEN 0 ELSE 1 END,
    gate_flags = CASE WHEN new.review_reasons LIKE '%duplicate%' THEN 1 ELSE 0 END
      + CASE WHEN new.review_reasons LIKE '%contradict%' THEN 2 ELSE 0 END,
    decision_s = CASE WHEN new.decided_at IS NULL THEN NULL
      ELSE (julianday(new.decided_at) - julianday(new.created_at)) * 86400.0 END
  WHERE id = new.id;
END;

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
