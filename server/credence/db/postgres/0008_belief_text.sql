-- Full-text index over belief content (PostgreSQL twin of migrations/0008_belief_text.sql), so
-- the read path can rank notes by relevance to a query. SQLite needs belief_text to give each
-- belief a stable FTS rowid; here the vector is a stored generated column on the row itself,
-- kept current by the database, queried with websearch_to_tsquery('english', user_text).

ALTER TABLE beliefs ADD COLUMN search_vector TSVECTOR
  GENERATED ALWAYS AS (to_tsvector('english'::regconfig, content)) STORED;
CREATE INDEX beliefs_search ON beliefs USING GIN (search_vector);
