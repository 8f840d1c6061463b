-- Puts the team and project of each observation into observations_fts, so a MATCH intersects with the scope of the caller
-- inside the index instead of visiting every matching row of the database and filtering afterwards.
-- fts_scope is VIRTUAL (computed on read, no storage), and the FTS table is external-content and reads it by name.
-- Tokens start with U+E000 (private use): unicode61 keeps it inside a token, while the query builder
-- (src/search/fts-query.ts) splits user text at it, so no search text can ever produce a scope token.
ALTER TABLE observations ADD COLUMN fts_scope TEXT GENERATED ALWAYS AS
  (char(57344) || 't' || team_id || ' ' || char(57344) || 'p' || project_id) VIRTUAL;

DROP TRIGGER observations_fts_ai;
DROP TRIGGER observations_fts_ad;
DROP TRIGGER observations_fts_au;
DROP TABLE observations_fts;

CREATE VIRTUAL TABLE observations_fts USING fts5(
  title, subtitle, narrative, facts, concepts, cjk_terms, fts_scope,
  content='observations', content_rowid='id',
  tokenize="porter unicode61 remove_diacritics 2"
);
CREATE TRIGGER observations_fts_ai AFTER INSERT ON observations BEGIN
  INSERT INTO observations_fts(rowid, title, subtitle, narrative, facts, concepts, cjk_terms, fts_scope)
  VALUES (new.id, new.title, new.subtitle, new.narrative, new.facts, new.concepts, new.cjk_terms, new.fts_scope);
END;
CREATE TRIGGER observations_fts_ad AFTER DELETE ON observations BEGIN
  INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, facts, concepts, cjk_terms, fts_scope)
  VALUES ('delete', old.id, old.title, old.subtitle, old.narrative, old.facts, old.concepts, old.cjk_terms, old.fts_scope);
END;
-- project_id changes when projects are merged (src/teams/admin-projects.ts): the scope tokens must move too.
CREATE TRIGGER observations_fts_au AFTER UPDATE OF title, subtitle, narrative, facts, concepts, cjk_terms, team_id, project_id ON observations BEGIN
  INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, facts, concepts, cjk_terms, fts_scope)
  VALUES ('delete', old.id, old.title, old.subtitle, old.narrative, old.facts, old.concepts, old.cjk_terms, old.fts_scope);
  INSERT INTO observations_fts(rowid, title, subtitle, narrative, facts, concepts, cjk_terms, fts_scope)
  VALUES (new.id, new.title, new.subtitle, new.narrative, new.facts, new.concepts, new.cjk_terms, new.fts_scope);
END;

INSERT INTO observations_fts(observations_fts) VALUES ('rebuild');
