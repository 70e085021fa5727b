-- The report's and the metrics' belief indexes hold only the rows their queries read: kept
-- beliefs (status = 'active') for the idle and fading lists, decided ones for the deciders,
-- pending ones for the wait figures. A Keep then adds its row to the indexes it enters instead
-- of moving it inside every one of them, and a store of mostly pending or forgotten beliefs
-- carries smaller indexes. The queries and the columns are unchanged (each WHERE implies its
-- index's predicate; the status column stays in the key so SQLite's planner, which has no
-- statistics, still picks these covering indexes over beliefs_by_status).
DROP INDEX beliefs_report_kept;
DROP INDEX beliefs_report_confidence;
DROP INDEX beliefs_report_deciders;
DROP INDEX beliefs_pending_age;
CREATE INDEX beliefs_report_kept
  ON beliefs(agent_id, status, decided_at, id, last_injected_at) WHERE status = 'active';
CREATE INDEX beliefs_report_confidence
  ON beliefs(agent_id, status, confidence, created_at, updated_at, id) WHERE status = 'active';
CREATE INDEX beliefs_report_deciders
  ON beliefs(agent_id, decided_by, decided_at, status) WHERE decided_at IS NOT NULL;
CREATE INDEX beliefs_pending_age ON beliefs(status, agent_id, updated_at) WHERE status = 'pending';
