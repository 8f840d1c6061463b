-- Every stored observation, summary and prompt belongs with its project and session to one team.
-- A row naming the project or session of another team (ids a session object kept from another database, after a
-- team move) is refused, and its batch rolls back whole. Read by test/worker/shards/move-quiesce.test.ts.
CREATE TRIGGER observations_same_team_ins BEFORE INSERT ON observations
WHEN NOT EXISTS (SELECT 1 FROM sessions WHERE id = NEW.session_id AND team_id = NEW.team_id)
  OR NOT EXISTS (SELECT 1 FROM projects WHERE id = NEW.project_id AND team_id = NEW.team_id)
BEGIN
  SELECT RAISE(ABORT, 'cross_team_row');
END;
CREATE TRIGGER observations_same_team_upd BEFORE UPDATE OF team_id, project_id, session_id ON observations
WHEN NOT EXISTS (SELECT 1 FROM sessions WHERE id = NEW.session_id AND team_id = NEW.team_id)
  OR NOT EXISTS (SELECT 1 FROM projects WHERE id = NEW.project_id AND team_id = NEW.team_id)
BEGIN
  SELECT RAISE(ABORT, 'cross_team_row');
END;
CREATE TRIGGER summaries_same_team_ins BEFORE INSERT ON summaries
WHEN NOT EXISTS (SELECT 1 FROM sessions WHERE id = NEW.session_id AND team_id = NEW.team_id)
  OR NOT EXISTS (SELECT 1 FROM projects WHERE id = NEW.project_id AND team_id = NEW.team_id)
BEGIN
  SELECT RAISE(ABORT, 'cross_team_row');
END;
CREATE TRIGGER summaries_same_team_upd BEFORE UPDATE OF team_id, project_id, session_id ON summaries
WHEN NOT EXISTS (SELECT 1 FROM sessions WHERE id = NEW.session_id AND team_id = NEW.team_id)
  OR NOT EXISTS (SELECT 1 FROM projects WHERE id = NEW.project_id AND team_id = NEW.team_id)
BEGIN
  SELECT RAISE(ABORT, 'cross_team_row');
END;
CREATE TRIGGER prompts_same_team_ins BEFORE INSERT ON prompts
WHEN NOT EXISTS (SELECT 1 FROM sessions WHERE id = NEW.session_id AND team_id = NEW.team_id)
  OR NOT EXISTS (SELECT 1 FROM projects WHERE id = NEW.project_id AND team_id = NEW.team_id)
BEGIN
  SELECT RAISE(ABORT, 'cross_team_row');
END;
CREATE TRIGGER prompts_same_team_upd BEFORE UPDATE OF team_id, project_id, session_id ON prompts
WHEN NOT EXISTS (SELECT 1 FROM sessions WHERE id = NEW.session_id AND team_id = NEW.team_id)
  OR NOT EXISTS (SELECT 1 FROM projects WHERE id = NEW.project_id AND team_id = NEW.team_id)
BEGIN
  SELECT RAISE(ABORT, 'cross_team_row');
END;
