-- Full-text index over belief content, so the read path can rank notes by relevance to a query.
-- belief_text gives every belief a stable integer (the FTS rowid): beliefs has a text primary
-- key, and VACUUM may renumber the implicit rowid of such a table. The FTS table is contentless
-- (the text lives in beliefs); the triggers pass the old text when an entry is removed.

CREATE TABLE belief_text (
  seq INTEGER PRIMARY KEY,
  belief_id TEXT NOT NULL UNIQUE REFERENCES beliefs(id),
  agent_id TEXT NOT NULL
);
CREATE INDEX belief_text_by_agent ON belief_text(agent_id, seq);

CREATE VIRTUAL TABLE beliefs_fts USING fts5(content, content='', tokenize='porter unicode61');

INSERT INTO belief_text(belief_id, agent_id) SELECT id, agent_id FROM beliefs ORDER BY created_at, id;
INSERT INTO beliefs_fts(rowid, content)
  SELECT t.seq, b.content FROM belief_text t JOIN beliefs b ON b.id = t.belief_id;

CREATE TRIGGER beliefs_fts_insert AFTER INSERT ON beliefs BEGIN
  INSERT INTO belief_text(belief_id, agent_id) VALUES (new.id, new.agent_id);
  INSERT INTO beliefs_fts(rowid, content)
  VALUES ((SELECT seq FROM belief_text WHERE belief_id = new.id), new.content);
END;
CREATE TRIGGER beliefs_fts_update AFTER UPDATE OF content ON beliefs
WHEN old.content IS NOT new.content BEGIN
  INSERT INTO beliefs_fts(beliefs_fts, rowid, content)
  VALUES ('delete', (SELECT seq FROM belief_text WHERE belief_id = old.id), old.content);
  INSERT INTO beliefs_fts(rowid, content)
  VALUES ((SELECT seq FROM belief_text WHERE belief_id = new.id), new.content);
END;
CREATE TRIGGER beliefs_fts_delete AFTER DELETE ON beliefs BEGIN
  INSERT INTO beliefs_fts(beliefs_fts, rowid, content)
  VALUES ('delete', (SELECT seq FROM belief_text WHERE belief_id = old.id), old.content);
  DELETE FROM belief_text WHERE belief_id = old.id;
END;
