// Drizzle description of the D1 tables (the SQL itself lives in migrations/; FTS5 tables and triggers are
// hand-written there). Kept in step with the migrations by test/worker/db/schema.test.ts.
import { blob, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

export const teams = sqliteTable('teams', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  slug: text('slug').notNull().unique(),
  name: text('name').notNull(),
  settings: text('settings').notNull().default('{}'),
  createdAt: integer('created_at').notNull(),
});

export const users = sqliteTable('users', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  teamId: integer('team_id').notNull().references(() => teams.id),
  handle: text('handle').notNull(),
  role: text('role', { enum: ['owner', 'admin', 'member'] }).notNull().default('member'),
  createdAt: integer('created_at').notNull(),
  removedAt: integer('removed_at'),
}, (t) => [uniqueIndex('users_team_handle').on(t.teamId, t.handle)]);

export const devices = sqliteTable('devices', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  teamId: integer('team_id').notNull().references(() => teams.id),
  userId: integer('user_id').notNull().references(() => users.id),
  name: text('name').notNull(),
  createdAt: integer('created_at').notNull(),
  lastSeenAt: integer('last_seen_at'),
});

export const tokens = sqliteTable('tokens', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  teamId: integer('team_id').notNull().references(() => teams.id),
  userId: integer('user_id').notNull().references(() => users.id),
  deviceId: integer('device_id').references(() => devices.id),
  hash: text('hash').notNull().unique(),
  prefix: text('prefix').notNull(),
  label: text('label'),
  scopes: text('scopes').notNull().default('ingest,read'),
  createdAt: integer('created_at').notNull(),
  lastUsedAt: integer('last_used_at'),
  expiresAt: integer('expires_at'),
  revokedAt: integer('revoked_at'),
});

export const projects = sqliteTable('projects', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  teamId: integer('team_id').notNull().references(() => teams.id),
  key: text('key').notNull(),
  ownerUserId: integer('owner_user_id').references(() => users.id),
  visibility: text('visibility', { enum: ['team', 'private'] }).notNull().default('team'),
  createdAt: integer('created_at').notNull(),
});

export const projectAliases = sqliteTable('project_aliases', {
  teamId: integer('team_id').notNull().references(() => teams.id),
  key: text('key').notNull(),
  projectId: integer('project_id').notNull().references(() => projects.id),
  createdAt: integer('created_at').notNull(),
}, (t) => [primaryKey({ columns: [t.teamId, t.key] })]);

export const sessions = sqliteTable('sessions', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  teamId: integer('team_id').notNull().references(() => teams.id),
  sessionKey: text('session_key').notNull(),
  projectId: integer('project_id').notNull().references(() => projects.id),
  userId: integer('user_id').notNull().references(() => users.id),
  deviceId: integer('device_id').references(() => devices.id),
  platform: text('platform').notNull().default('claude-code'),
  promptCount: integer('prompt_count').notNull().default(0),
  startedAt: integer('started_at').notNull(),
  endedAt: integer('ended_at'),
  deadLetters: integer('dead_letters').notNull().default(0),
});

export const prompts = sqliteTable('prompts', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  teamId: integer('team_id').notNull().references(() => teams.id),
  projectId: integer('project_id').notNull().references(() => projects.id),
  sessionId: integer('session_id').notNull().references(() => sessions.id),
  promptNumber: integer('prompt_number').notNull(),
  text: text('text').notNull(),
  cjkTerms: text('cjk_terms').notNull().default(''),
  authorUserId: integer('author_user_id').notNull().references(() => users.id),
  createdAt: integer('created_at').notNull(),
  promptId: text('prompt_id'),
});

export const observations = sqliteTable('observations', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  teamId: integer('team_id').notNull().references(() => teams.id),
  projectId: integer('project_id').notNull().references(() => projects.id),
  sessionId: integer('session_id').notNull().references(() => sessions.id),
  promptNumber: integer('prompt_number').notNull().default(0),
  type: text('type').notNull(),
  title: text('title'),
  subtitle: text('subtitle'),
  facts: text('facts').notNull().default('[]'),
  narrative: text('narrative'),
  concepts: text('concepts').notNull().default('[]'),
  filesRead: text('files_read').notNull().default('[]'),
  filesModified: text('files_modified').notNull().default('[]'),
  cjkTerms: text('cjk_terms').notNull().default(''),
  createdAt: integer('created_at').notNull(),
  storedAt: integer('stored_at').notNull(),
  discoveryTokens: integer('discovery_tokens').notNull().default(0),
  contentHash: text('content_hash').notNull(),
  authorUserId: integer('author_user_id').notNull().references(() => users.id),
  deviceId: integer('device_id').references(() => devices.id),
  agentId: text('agent_id'),
  agentType: text('agent_type'),
  generationId: text('generation_id'),
  source: text('source').notNull().default('observer'),
  supersededBy: integer('superseded_by'),
  deletedAt: integer('deleted_at'),
  embeddedAt: integer('embedded_at'),
  promptId: text('prompt_id'),
  turnKey: text('turn_key'),
}, (t) => [index('idx_obs_project_time').on(t.teamId, t.projectId, t.createdAt)]);

export const observationFiles = sqliteTable('observation_files', {
  observationId: integer('observation_id').notNull().references(() => observations.id),
  teamId: integer('team_id').notNull(),
  projectId: integer('project_id').notNull(),
  path: text('path').notNull(),
  kind: text('kind', { enum: ['read', 'modified'] }).notNull(),
}, (t) => [primaryKey({ columns: [t.observationId, t.path, t.kind] })]);

export const summaries = sqliteTable('summaries', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  teamId: integer('team_id').notNull().references(() => teams.id),
  projectId: integer('project_id').notNull().references(() => projects.id),
  sessionId: integer('session_id').notNull().references(() => sessions.id),
  promptNumber: integer('prompt_number').notNull().default(0),
  request: text('request').notNull().default(''),
  investigated: text('investigated').notNull().default(''),
  learned: text('learned').notNull().default(''),
  completed: text('completed').notNull().default(''),
  nextSteps: text('next_steps').notNull().default(''),
  notes: text('notes'),
  cjkTerms: text('cjk_terms').notNull().default(''),
  createdAt: integer('created_at').notNull(),
  contentHash: text('content_hash').notNull(),
  authorUserId: integer('author_user_id').notNull().references(() => users.id),
  deviceId: integer('device_id').references(() => devices.id),
  deletedAt: integer('deleted_at'),
  promptId: text('prompt_id'),
  turnKey: text('turn_key'),
});

export const auditLog = sqliteTable('audit_log', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  teamId: integer('team_id').notNull().references(() => teams.id),
  actorUserId: integer('actor_user_id'),
  action: text('action').notNull(),
  target: text('target'),
  detail: text('detail').notNull().default('{}'),
  createdAt: integer('created_at').notNull(),
});

export const localVectors = sqliteTable('local_vectors', {
  observationId: integer('observation_id').primaryKey(),
  teamId: integer('team_id').notNull(),
  projectId: integer('project_id').notNull(),
  type: text('type').notNull(),
  embedding: blob('embedding', { mode: 'buffer' }).notNull(),
});

/** Every table above, for the schema-drift test. */
export const allTables = { teams, users, devices, tokens, projects, projectAliases, sessions, prompts, observations, observationFiles, summaries, auditLog, localVectors };
