-- What each observer call cost: tokens per team, day (UTC), session and model, summed as calls come in.
-- The daily and monthly spend of a team (for observer budgets) is a range read on (team_id, day).
CREATE TABLE observer_usage (
  team_id INTEGER NOT NULL REFERENCES teams(id),
  day TEXT NOT NULL,
  session_id INTEGER NOT NULL,
  model TEXT NOT NULL,
  calls INTEGER NOT NULL DEFAULT 0,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens INTEGER NOT NULL DEFAULT 0,
  cache_write_tokens INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (team_id, day, session_id, model)
) WITHOUT ROWID;
