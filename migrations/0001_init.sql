-- cairn schema v1: teams, auth, projects, sessions, memory rows and their FTS5 indexes.
-- Every row carries team_id, and every query filters on it.

CREATE TABLE teams (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  slug TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  settings TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL
);

CREATE TABLE users (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  team_id INTEGER NOT NULL REFERENCES teams(id),
  handle TEXT NOT NULL,
  role TEXT NOT NULL DEFAULT 'member' CHECK (role IN ('owner','admin','member')),
  created_at INTEGER NOT NULL,
  removed_at INTEGER,
  UNIQUE (team_id, handle)
);

CREATE TABLE devices (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  team_id INTEGER NOT NULL REFERENCES teams(id),
  user_id INTEGER NOT NULL REFERENCES users(id),
  name TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  last_seen_at INTEGER,
  UNIQUE (team_id, user_id, name)
);

CREATE TABLE tokens (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  team_id INTEGER NOT NULL REFERENCES teams(id),
  user_id INTEGER NOT NULL REFERENCES users(id),
  device_id INTEGER REFERENCES devices(id),
  hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  label TEXT,
  scopes TEXT NOT NULL DEFAULT 'ingest,read',
  created_at INTEGER NOT NULL,
  last_used_at INTEGER,
  expires_at INTEGER,
  revoked_at INTEGER
);
CREATE INDEX idx_tokens_team ON tokens (team_id, user_id);

CREATE TABLE projects (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  team_id INTEGER NOT NULL REFERENCES teams(id),
  key TEXT NOT NULL,
  owner_user_id INTEGER REFERENCES users(id),
  visibility TEXT NOT NULL DEFAULT 'team' CHECK (visibility IN ('team','private')),
  created_at INTEGER NOT NULL,
  UNIQUE (team_id, key)
);

-- Old keys of renamed or merged projects keep resolving to the surviving project.
CREATE TABLE project_aliases (
  team_id INTEGER NOT NULL REFERENCES teams(id),
  key TEXT NOT NULL,
  project_id INTEGER NOT NULL REFERENCES projects(id),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (team_id, key)
);

CREATE TABLE sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  team_id INTEGER NOT NULL REFERENCES teams(id),
  session_key TEXT NOT NULL,
  project_id INTEGER NOT NULL REFERENCES projects(id),
  user_id INTEGER NOT NULL REFERENCES users(id),
  device_id INTEGER REFERENCES devices(id),
  platform TEXT NOT NULL DEFAULT 'claude-code',
  prompt_count INTEGER NOT NULL DEFAULT 0,
  started_at INTEGER NOT NULL,
  ended_at INTEGER,
  UNIQUE (team_id, session_key)
);
CREATE INDEX idx_sessions_project ON sessions (team_id, project_id, started_at DESC);

CREATE TABLE prompts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  team_id INTEGER NOT NULL REFERENCES teams(id),
  project_id INTEGER NOT NULL REFERENCES projects(id),
  session_id INTEGER NOT NULL REFERENCES sessions(id),
  prompt_number INTEGER NOT NULL,
  text TEXT NOT NULL,
  cjk_terms TEXT NOT NULL DEFAULT '',
  author_user_id INTEGER NOT NULL REFERENCES users(id),
  created_at INTEGER NOT NULL,
  UNIQUE (session_id, prompt_number)
);
CREATE INDEX idx_prompts_project ON prompts (team_id, project_id, created_at DESC);

CREATE TABLE observations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  team_id INTEGER NOT NULL REFERENCES teams(id),
  project_id INTEGER NOT NULL REFERENCES projects(id),
  session_id INTEGER NOT NULL REFERENCES sessions(id),
  prompt_number INTEGER NOT NULL DEFAULT 0,
  type TEXT NOT NULL,
  title TEXT,
  subtitle TEXT,
  facts TEXT NOT NULL DEFAULT '[]',
  narrative TEXT,
  concepts TEXT NOT NULL DEFAULT '[]',
  files_read TEXT NOT NULL DEFAULT '[]',
  files_modified TEXT NOT NULL DEFAULT '[]',
  cjk_terms TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  stored_at INTEGER NOT NULL,
  discovery_tokens INTEGER NOT NULL DEFAULT 0,
  content_hash TEXT NOT NULL,
  author_user_id INTEGER NOT NULL REFERENCES users(id),
  device_id INTEGER REFERENCES devices(id),
  agent_id TEXT,
  agent_type TEXT,
  generation_id TEXT,
  source TEXT NOT NULL DEFAULT 'observer',
  superseded_by INTEGER,
  deleted_at INTEGER,
  embedded_at INTEGER,
  UNIQUE (session_id, content_hash)
);
CREATE INDEX idx_obs_project_time ON observations (team_id, project_id, created_at DESC);
CREATE INDEX idx_obs_team_time ON observations (team_id, created_at DESC);
CREATE INDEX idx_obs_session ON observations (session_id, created_at);
CREATE INDEX idx_obs_unembedded ON observations (team_id, id) WHERE embedded_at IS NULL AND deleted_at IS NULL;

CREATE TABLE observation_files (
  observation_id INTEGER NOT NULL REFERENCES observations(id),
  team_id INTEGER NOT NULL,
  project_id INTEGER NOT NULL,
  path TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('read','modified')),
  PRIMARY KEY (observation_id, path, kind)
);
CREATE INDEX idx_obs_files_path ON observation_files (team_id, project_id, path);

CREATE TABLE summaries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  team_id INTEGER NOT NULL REFERENCES teams(id),
  project_id INTEGER NOT NULL REFERENCES projects(id),
  session_id INTEGER NOT NULL REFERENCES sessions(id),
  prompt_number INTEGER NOT NULL DEFAULT 0,
  request TEXT NOT NULL DEFAULT '',
  investigated TEXT NOT NULL DEFAULT '',
  learned TEXT NOT NULL DEFAULT '',
  completed TEXT NOT NULL DEFAULT '',
  next_steps TEXT NOT NULL DEFAULT '',
  notes TEXT,
  cjk_terms TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  content_hash TEXT NOT NULL,
  author_user_id INTEGER NOT NULL REFERENCES users(id),
  device_id INTEGER REFERENCES devices(id),
  deleted_at INTEGER,
  UNIQUE (session_id, content_hash)
);
CREATE INDEX idx_summaries_project_time ON summaries (team_id, project_id, created_at DESC);

CREATE TABLE audit_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  team_id INTEGER NOT NULL REFERENCES teams(id),
  actor_user_id INTEGER,
  action TEXT NOT NULL,
  target TEXT,
  detail TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL
);
CREATE INDEX idx_audit_team_time ON audit_log (team_id, created_at DESC);

-- Local vector index (wrangler dev and tests), production uses Vectorize.
CREATE TABLE local_vectors (
  observation_id INTEGER PRIMARY KEY,
  team_id INTEGER NOT NULL,
  project_id INTEGER NOT NULL,
  type TEXT NOT NULL,
  embedding BLOB NOT NULL
);
CREATE INDEX idx_local_vectors_scope ON local_vectors (team_id, project_id);

-- FTS5. cjk_terms holds CJK bigrams computed by the app (src/lib/cjk.ts), so 2-character Chinese and
-- Japanese terms match even though unicode61 treats a run of CJK characters as one token.
CREATE VIRTUAL TABLE observations_fts USING fts5(
  title, subtitle, narrative, facts, concepts, cjk_terms,
  content='observations', content_rowid='id',
  tokenize="porter unicode61 remove_diacritics 2"
);
CREATE TRIGGER observations_fts_ai AFTER INSERT ON observations BEGIN
  INSERT INTO observations_fts(rowid, title, subtitle, narrative, facts, concepts, cjk_terms)
  VALUES (new.id, new.title, new.subtitle, new.narrative, new.facts, new.concepts, new.cjk_terms);
END;
CREATE TRIGGER observations_fts_ad AFTER DELETE ON observations BEGIN
  INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, facts, concepts, cjk_terms)
  VALUES ('delete', old.id, old.title, old.subtitle, old.narrative, old.facts, old.concepts, old.cjk_terms);
END;
CREATE TRIGGER observations_fts_au AFTER UPDATE OF title, subtitle, narrative, facts, concepts, cjk_terms ON observations BEGIN
  INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, facts, concepts, cjk_terms)
  VALUES ('delete', old.id, old.title, old.subtitle, old.narrative, old.facts, old.concepts, old.cjk_terms);
  INSERT INTO observations_fts(rowid, title, subtitle, narrative, facts, concepts, cjk_terms)
  VALUES (new.id, new.title, new.subtitle, new.narrative, new.facts, new.concepts, new.cjk_terms);
END;

CREATE VIRTUAL TABLE summaries_fts USING fts5(
  request, investigated, learned, completed, next_steps, notes, cjk_terms,
  content='summaries', content_rowid='id',
  tokenize="porter unicode61 remove_diacritics 2"
);
CREATE TRIGGER summaries_fts_ai AFTER INSERT ON summaries BEGIN
  INSERT INTO summaries_fts(rowid, request, investigated, learned, completed, next_steps, notes, cjk_terms)
  VALUES (new.id, new.request, new.investigated, new.learned, new.completed, new.next_steps, new.notes, new.cjk_terms);
END;
CREATE TRIGGER summaries_fts_ad AFTER DELETE ON summaries BEGIN
  INSERT INTO summaries_fts(summaries_fts, rowid, request, investigated, learned, completed, next_steps, notes, cjk_terms)
  VALUES ('delete', old.id, old.request, old.investigated, old.learned, old.completed, old.next_steps, old.notes, old.cjk_terms);
END;

CREATE VIRTUAL TABLE prompts_fts USING fts5(
  text, cjk_terms,
  content='prompts', content_rowid='id',
  tokenize="porter unicode61 remove_diacritics 2"
);
CREATE TRIGGER prompts_fts_ai AFTER INSERT ON prompts BEGIN
  INSERT INTO prompts_fts(rowid, text, cjk_terms) VALUES (new.id, new.text, new.cjk_terms);
END;
CREATE TRIGGER prompts_fts_ad AFTER DELETE ON prompts BEGIN
  INSERT INTO prompts_fts(prompts_fts, rowid, text, cjk_terms) VALUES ('delete', old.id, old.text, old.cjk_terms);
END;
