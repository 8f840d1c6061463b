-- Events belong to the prompt during which they happened: the prompt id of the agent itself (Claude Code ≥ 2.1 sends
-- one) is kept with prompts, observations and summaries. turn_key names the observer turn that stored a row,
-- so a turn replayed after a crash between store and confirm is recognised as stored (whatever the observer
-- would answer the second time).
ALTER TABLE prompts ADD COLUMN prompt_id TEXT;
ALTER TABLE observations ADD COLUMN prompt_id TEXT;
ALTER TABLE observations ADD COLUMN turn_key TEXT;
ALTER TABLE summaries ADD COLUMN prompt_id TEXT;
ALTER TABLE summaries ADD COLUMN turn_key TEXT;
CREATE INDEX idx_obs_turn ON observations (turn_key) WHERE turn_key IS NOT NULL;
CREATE INDEX idx_summaries_turn ON summaries (turn_key) WHERE turn_key IS NOT NULL;

-- Forget used to hide rows (deleted_at) and keep their text, forgetting now deletes. Rows forgotten the old
-- way are deleted here, with their file rows, local vectors and index terms.
DELETE FROM observation_files WHERE observation_id IN (SELECT id FROM observations WHERE deleted_at IS NOT NULL);
DELETE FROM local_vectors WHERE observation_id IN (SELECT id FROM observations WHERE deleted_at IS NOT NULL);
DELETE FROM observations WHERE deleted_at IS NOT NULL;
DELETE FROM summaries WHERE deleted_at IS NOT NULL;
INSERT INTO observations_fts(observations_fts) VALUES ('optimize');
INSERT INTO summaries_fts(summaries_fts) VALUES ('optimize');
