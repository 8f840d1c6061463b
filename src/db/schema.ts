// Drizzle description of the D1 tables: the source of the row types (`$inferSelect`) and of generated
// migrations (drizzle-kit, see drizzle.config.ts). It must describe exactly what migrations/ builds:
// test/worker/db/schema.test.ts applies this schema's DDL to an empty SQLite and compares it with D1 after
// the migrations, and scripts/check-migrations.mjs fails when drizzle-kit would generate a new migration.
// FTS5 tables and their triggers are hand-written SQL migrations (drizzle-kit cannot express them).
import { desc, sql } from 'drizzle-orm';
import {
  blob,
  check,
  index,
  integer,
  primaryKey,
  sqliteTable,
  text,
  unique,
  uniqueIndex,
} from 'drizzle-orm/sqlite-core';

export const teams = sqliteTable('teams', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  slug: text('slug').notNull().unique(),
  name: text('name').notNull(),
  settings: text('settings').notNull().default('{}'),
  createdAt: integer('created_at').notNull(),
});

export const users = sqliteTable(
  'users',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    teamId: integer('team_id')
      .notNull()
      .references(() => teams.id),
    handle: text('handle').notNull(),
    /** `reader` (issue 38): reads the team's memory; writes only their own private projects (db/write-policy.ts). */
    role: text('role', { enum: ['owner', 'admin', 'member', 'reader'] })
      .notNull()
      .default('member'),
    createdAt: integer('created_at').notNull(),
    removedAt: integer('removed_at'),
  },
  (t) => [unique().on(t.teamId, t.handle), check('users_role', sql`role IN ('owner','admin','member','reader')`)],
);

export const devices = sqliteTable(
  'devices',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    teamId: integer('team_id')
      .notNull()
      .references(() => teams.id),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id),
    name: text('name').notNull(),
    createdAt: integer('created_at').notNull(),
    lastSeenAt: integer('last_seen_at'),
  },
  (t) => [unique().on(t.teamId, t.userId, t.name)],
);

export const tokens = sqliteTable(
  'tokens',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    teamId: integer('team_id')
      .notNull()
      .references(() => teams.id),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id),
    deviceId: integer('device_id').references(() => devices.id),
    hash: text('hash').notNull().unique(),
    prefix: text('prefix').notNull(),
    label: text('label'),
    scopes: text('scopes').notNull().default('ingest,read'),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at'),
    expiresAt: integer('expires_at'),
    revokedAt: integer('revoked_at'),
  },
  (t) => [index('idx_tokens_team').on(t.teamId, t.userId)],
);

export const projects = sqliteTable(
  'projects',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    teamId: integer('team_id')
      .notNull()
      .references(() => teams.id),
    key: text('key').notNull(),
    ownerUserId: integer('owner_user_id').references(() => users.id),
    visibility: text('visibility', { enum: ['team', 'private'] })
      .notNull()
      .default('team'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [unique().on(t.teamId, t.key), check('projects_visibility', sql`visibility IN ('team','private')`)],
);

/** Old keys of renamed or merged projects keep resolving to the surviving project. */
export const projectAliases = sqliteTable(
  'project_aliases',
  {
    teamId: integer('team_id')
      .notNull()
      .references(() => teams.id),
    key: text('key').notNull(),
    projectId: integer('project_id')
      .notNull()
      .references(() => projects.id),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.key] })],
);

export const sessions = sqliteTable(
  'sessions',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    teamId: integer('team_id')
      .notNull()
      .references(() => teams.id),
    sessionKey: text('session_key').notNull(),
    projectId: integer('project_id')
      .notNull()
      .references(() => projects.id),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id),
    deviceId: integer('device_id').references(() => devices.id),
    platform: text('platform').notNull().default('claude-code'),
    promptCount: integer('prompt_count').notNull().default(0),
    startedAt: integer('started_at').notNull(),
    endedAt: integer('ended_at'),
    /** Events the SessionDO gave up on, counted before retention empties its storage. */
    deadLetters: integer('dead_letters').notNull().default(0),
    /** When an admin's import made it (null: a live session). Import writes only into sessions it made (db/write-policy.ts). */
    importedAt: integer('imported_at'),
    /** The handle an import named as the session's user when that was not the importer: provenance only. */
    importedAuthor: text('imported_author'),
    /** The checkout's branch and HEAD commit at the session's first event (null: unknown, e.g. older clients). */
    gitBranch: text('git_branch'),
    gitCommit: text('git_commit'),
    /**
     * Server time after which the session's Durable Object may empty its storage (its end arrived at
     * `retire_after - SESSION_RETENTION_SECONDS`); null once the object has emptied itself, or before the session
     * ended. The daily sweep wakes objects still holding text past it (an alarm whose retries ran out:
     * src/retention/session-retire.ts).
     */
    retireAfter: integer('retire_after'),
  },
  (t) => [
    unique().on(t.teamId, t.sessionKey),
    index('idx_sessions_project').on(t.teamId, t.projectId, desc(t.startedAt)),
    index('idx_sessions_retire').on(t.retireAfter, t.id).where(sql`retire_after IS NOT NULL`),
  ],
);

export const prompts = sqliteTable(
  'prompts',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    teamId: integer('team_id')
      .notNull()
      .references(() => teams.id),
    projectId: integer('project_id')
      .notNull()
      .references(() => projects.id),
    sessionId: integer('session_id')
      .notNull()
      .references(() => sessions.id),
    promptNumber: integer('prompt_number').notNull(),
    text: text('text').notNull(),
    /** CJK bigrams computed by the app (src/lib/cjk.ts) so 2-character terms match in FTS5. */
    cjkTerms: text('cjk_terms').notNull().default(''),
    authorUserId: integer('author_user_id')
      .notNull()
      .references(() => users.id),
    createdAt: integer('created_at').notNull(),
    /** The agent's own prompt id, when it sends one. */
    promptId: text('prompt_id'),
    /** When its vector was written (null: still to embed, src/vectors/index-records.ts). */
    embeddedAt: integer('embedded_at'),
    /** The author an import named when that was not the importer: provenance only, never the row's owner. */
    importedAuthor: text('imported_author'),
    /**
     * Why the text was held back (src/shared/instructions.ts kinds, comma-separated; null: never held). A held
     * row is read only by its author and admins until `released_at` is set (src/db/visibility.ts).
     */
    heldKinds: text('held_kinds'),
    releasedAt: integer('released_at'),
    releasedBy: integer('released_by'),
    /** Embedding calls that refused this record alone; at MAX_EMBED_FAILURES (3) it is skipped (db/vectors.ts). */
    embedFailures: integer('embed_failures').notNull().default(0),
  },
  (t) => [
    unique().on(t.sessionId, t.promptNumber),
    index('idx_prompts_project').on(t.teamId, t.projectId, desc(t.createdAt)),
    // The literal 3 is MAX_EMBED_FAILURES (db/vectors.ts): a partial index serves only queries naming the constant.
    index('idx_prompts_unembedded').on(t.teamId, t.id).where(sql`embedded_at IS NULL AND embed_failures < 3`),
    index('idx_prompts_embed_skipped').on(t.teamId).where(sql`embed_failures >= 3`),
    // The review queue's held rows (src/hold/): few, so partial indexes on each table.
    index('idx_prompts_held').on(t.teamId, t.id).where(sql`held_kinds IS NOT NULL AND released_at IS NULL`),
  ],
);

export const observations = sqliteTable(
  'observations',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    teamId: integer('team_id')
      .notNull()
      .references(() => teams.id),
    projectId: integer('project_id')
      .notNull()
      .references(() => projects.id),
    sessionId: integer('session_id')
      .notNull()
      .references(() => sessions.id),
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
    authorUserId: integer('author_user_id')
      .notNull()
      .references(() => users.id),
    deviceId: integer('device_id').references(() => devices.id),
    agentId: text('agent_id'),
    agentType: text('agent_type'),
    generationId: text('generation_id'),
    source: text('source').notNull().default('observer'),
    supersededBy: integer('superseded_by'),
    deletedAt: integer('deleted_at'),
    embeddedAt: integer('embedded_at'),
    /**
     * Team and project as FTS5 tokens (migrations/0002_fts_scope.sql): a MATCH intersects with the caller's
     * scope inside the index. U+E000 starts each token so no user search text can produce one.
     */
    ftsScope: text('fts_scope').generatedAlwaysAs(
      sql`(char(57344) || 't' || team_id || ' ' || char(57344) || 'p' || project_id)`,
      { mode: 'virtual' },
    ),
    promptId: text('prompt_id'),
    /** The observer turn that stored the row: a turn replayed after a crash is recognised as stored. */
    turnKey: text('turn_key'),
    /** The author an import named when that was not the importer: provenance only, never the row's owner. */
    importedAuthor: text('imported_author'),
    /** Branch and HEAD commit of the checkout when its events happened (null: unknown, neutral in the index). */
    gitBranch: text('git_branch'),
    gitCommit: text('git_commit'),
    /**
     * Why the text was held back (src/shared/instructions.ts kinds, comma-separated; null: never held). A held
     * row is read only by its author and admins until `released_at` is set (src/db/visibility.ts).
     */
    heldKinds: text('held_kinds'),
    releasedAt: integer('released_at'),
    releasedBy: integer('released_by'),
    /**
     * Consolidation (src/consolidation/): this near-duplicate was merged into that record, which stands for it.
     * Kept as provenance, out of the context index and search; undone by clearing it (its `merge` event says when).
     */
    mergedInto: integer('merged_into'),
    /**
     * The identifiers its text cites (src/shared/names.ts; JSON list, at most 16): what a reader's checkout is
     * checked for when the code it cites changed (src/shared/evidence.ts). Derived in the one insert.
     */
    names: text('names').notNull().default('[]'),
    /** Embedding calls that refused this record alone; at MAX_EMBED_FAILURES (3) it is skipped (db/vectors.ts). */
    embedFailures: integer('embed_failures').notNull().default(0),
    /**
     * Use-based fading (src/db/fading.ts): when it was stored or last used (fetched, marked useful, injected and
     * then fetched). Set by the one insert, moved on by each use; NULL for rows stored before migration 0027, whose
     * clock starts at the database's `fade_epoch`. A record whose clock is older than the team's fade_after_days
     * leaves the context index; nothing is deleted.
     */
    renewedAt: integer('renewed_at'),
  },
  (t) => [
    unique().on(t.sessionId, t.contentHash),
    index('idx_obs_project_time').on(t.teamId, t.projectId, desc(t.createdAt)),
    index('idx_obs_team_time').on(t.teamId, desc(t.createdAt)),
    index('idx_obs_session').on(t.sessionId, t.createdAt),
    index('idx_obs_unembedded')
      .on(t.teamId, t.id)
      .where(sql`embedded_at IS NULL AND deleted_at IS NULL AND embed_failures < 3`),
    index('idx_obs_embed_skipped').on(t.teamId).where(sql`embed_failures >= 3`),
    index('idx_obs_turn').on(t.turnKey).where(sql`turn_key IS NOT NULL`),
    // What the visibility rule and the search filters read, by id: a keyword search checks every FTS match (10k
    // rows for common words at 100k) against the rule, and this index answers that without reading the 1–2 KB rows.
    index('idx_obs_readable').on(
      t.id,
      t.teamId,
      t.projectId,
      t.deletedAt,
      t.type,
      t.authorUserId,
      t.createdAt,
      t.sessionId,
      t.heldKinds,
      t.releasedAt,
    ),
    // The review queue's superseded records (src/corrections/review.ts): few rows, so a partial index.
    index('idx_obs_superseded').on(t.teamId, t.id).where(sql`superseded_by IS NOT NULL`),
    index('idx_obs_held').on(t.teamId, t.id).where(sql`held_kinds IS NOT NULL AND released_at IS NULL`),
    index('idx_obs_merged').on(t.teamId, t.mergedInto).where(sql`merged_into IS NOT NULL`),
    // The context index's older rows that are still alive (renewed within the fade window): a range, not a walk.
    index('idx_obs_renewed').on(t.teamId, t.projectId, t.renewedAt).where(sql`renewed_at IS NOT NULL`),
  ],
);

export const observationFiles = sqliteTable(
  'observation_files',
  {
    observationId: integer('observation_id')
      .notNull()
      .references(() => observations.id),
    teamId: integer('team_id').notNull(),
    projectId: integer('project_id').notNull(),
    path: text('path').notNull(),
    kind: text('kind', { enum: ['read', 'modified'] }).notNull(),
    /**
     * The path's last segment (after its last `/`), VIRTUAL: stored only in idx_obs_files_name. A search for
     * `verify-token.ts` matches a path equal to it or ending in `/verify-token.ts`; both end in this segment, so the
     * index finds the few candidate rows instead of the team's every file row being tested.
     */
    basename: text('basename').generatedAlwaysAs(sql`(substr(path, length(rtrim(path, replace(path, '/', ''))) + 1))`, {
      mode: 'virtual',
    }),
    /**
     * Evidence (src/shared/evidence.ts): the git blob id of the file's content when the record was made, its
     * whitespace-insensitive id, and for a changed file its blob id before the change (the git index's). NULL: not
     * known (older rows and clients, a path no tool call of the turn named, a file outside the repository).
     */
    blob: text('blob'),
    ws: text('ws'),
    base: text('base'),
  },
  (t) => [
    primaryKey({ columns: [t.observationId, t.path, t.kind] }),
    index('idx_obs_files_path').on(t.teamId, t.projectId, t.path),
    index('idx_obs_files_name').on(t.teamId, t.basename),
    check('observation_files_kind', sql`kind IN ('read','modified')`),
  ],
);

export const summaries = sqliteTable(
  'summaries',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    teamId: integer('team_id')
      .notNull()
      .references(() => teams.id),
    projectId: integer('project_id')
      .notNull()
      .references(() => projects.id),
    sessionId: integer('session_id')
      .notNull()
      .references(() => sessions.id),
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
    authorUserId: integer('author_user_id')
      .notNull()
      .references(() => users.id),
    deviceId: integer('device_id').references(() => devices.id),
    deletedAt: integer('deleted_at'),
    promptId: text('prompt_id'),
    turnKey: text('turn_key'),
    /** When its vector was written (null: still to embed, src/vectors/index-records.ts). */
    embeddedAt: integer('embedded_at'),
    /** The author an import named when that was not the importer: provenance only, never the row's owner. */
    importedAuthor: text('imported_author'),
    /**
     * Why the text was held back (src/shared/instructions.ts kinds, comma-separated; null: never held). A held
     * row is read only by its author and admins until `released_at` is set (src/db/visibility.ts).
     */
    heldKinds: text('held_kinds'),
    releasedAt: integer('released_at'),
    releasedBy: integer('released_by'),
    /** Embedding calls that refused this record alone; at MAX_EMBED_FAILURES (3) it is skipped (db/vectors.ts). */
    embedFailures: integer('embed_failures').notNull().default(0),
  },
  (t) => [
    unique().on(t.sessionId, t.contentHash),
    index('idx_summaries_project_time').on(t.teamId, t.projectId, desc(t.createdAt)),
    index('idx_summaries_turn').on(t.turnKey).where(sql`turn_key IS NOT NULL`),
    index('idx_summaries_unembedded')
      .on(t.teamId, t.id)
      .where(sql`embedded_at IS NULL AND deleted_at IS NULL AND embed_failures < 3`),
    index('idx_summaries_embed_skipped').on(t.teamId).where(sql`embed_failures >= 3`),
    index('idx_summaries_held').on(t.teamId, t.id).where(sql`held_kinds IS NOT NULL AND released_at IS NULL`),
  ],
);

export const auditLog = sqliteTable(
  'audit_log',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    teamId: integer('team_id')
      .notNull()
      .references(() => teams.id),
    actorUserId: integer('actor_user_id'),
    action: text('action').notNull(),
    target: text('target'),
    detail: text('detail').notNull().default('{}'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('idx_audit_team_time').on(t.teamId, desc(t.createdAt))],
);

/**
 * Local vector index (wrangler dev and tests); production uses Vectorize. One row per embedded part: a record's
 * main text (part 0) or one of an observation's facts (part i, src/vectors/keys.ts).
 */
export const localVectors = sqliteTable(
  'local_vectors',
  {
    kind: text('kind', { enum: ['observation', 'summary', 'prompt'] }).notNull(),
    recordId: integer('record_id').notNull(),
    part: integer('part').notNull().default(0),
    teamId: integer('team_id').notNull(),
    projectId: integer('project_id').notNull(),
    type: text('type').notNull(),
    embedding: blob('embedding', { mode: 'buffer' }).notNull(),
    /**
     * Hex of the vector's first and last 8 bytes (migrations/0008_local_vector_fingerprints.sql): the local index
     * re-reads a vector it has decoded only when this changes. VIRTUAL, so stored only in the index below.
     */
    fingerprint: text('fingerprint').generatedAlwaysAs(
      sql`(hex(substr(embedding, 1, 8)) || hex(substr(embedding, -8)))`,
      { mode: 'virtual' },
    ),
  },
  (t) => [
    primaryKey({ columns: [t.kind, t.recordId, t.part] }),
    index('idx_local_vectors_scope').on(t.teamId, t.kind, t.projectId),
    // A kind's newest vectors of a team with their fingerprints (db/vectors.ts `localVectorFingerprints`), in that
    // query's order, from this index alone: without it every hybrid search read and sorted each 2 KB vector row.
    index('idx_local_vectors_fingerprint').on(
      t.teamId,
      t.kind,
      desc(t.recordId),
      t.part,
      t.projectId,
      t.type,
      t.fingerprint,
    ),
    check('local_vectors_kind', sql`kind IN ('observation','summary','prompt')`),
  ],
);

/**
 * A counter per team and kind that every insert, update and delete of its local vectors moves (the triggers of
 * migrations/0010_local_vector_generations.sql): the local index keeps a team's candidate list per isolate and
 * re-reads it only when the counter moved. Rows are never deleted, so a counter never comes back to a value
 * it had (a team moved away and back keeps counting up).
 */
export const localVectorGenerations = sqliteTable(
  'local_vector_generations',
  {
    teamId: integer('team_id').notNull(),
    kind: text('kind').notNull(),
    generation: integer('generation').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.kind] })],
);

/** Observer spend: tokens per team, UTC day, session and model (src/db/usage.ts). */
export const observerUsage = sqliteTable(
  'observer_usage',
  {
    teamId: integer('team_id')
      .notNull()
      .references(() => teams.id),
    day: text('day').notNull(),
    sessionId: integer('session_id').notNull(),
    model: text('model').notNull(),
    calls: integer('calls').notNull().default(0),
    inputTokens: integer('input_tokens').notNull().default(0),
    outputTokens: integer('output_tokens').notNull().default(0),
    cacheReadTokens: integer('cache_read_tokens').notNull().default(0),
    cacheWriteTokens: integer('cache_write_tokens').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.day, t.sessionId, t.model] })],
);

/**
 * Which database a team's content lives on (src/db/shards.ts), kept on the directory (the `DB` binding). A team
 * without a row lives on `DB`, so a one-database install has an empty map.
 */
export const teamShards = sqliteTable('team_shards', {
  teamId: integer('team_id')
    .primaryKey()
    .references(() => teams.id),
  /** The D1 binding's name: `DB_1`, `DB_2`, … */
  shard: text('shard').notNull(),
  placedAt: integer('placed_at').notNull(),
});

/**
 * The daily cron's parts (FTS check, retention sweep, backup), one row each, on every database the cron
 * writes them to (the directory): when each last ran and how it ended, for `GET /api/admin/health`.
 */
export const maintenanceRuns = sqliteTable('maintenance_runs', {
  job: text('job').primaryKey(),
  startedAt: integer('started_at').notNull(),
  finishedAt: integer('finished_at'),
  /** 1 ended well, 0 failed, null still running (or died with its invocation). */
  ok: integer('ok'),
  error: text('error'),
  /** JSON: what the run did (counts, never memory text). */
  detail: text('detail').notNull().default('{}'),
});

/**
 * What happened to an observation after it was stored, oldest first: its versions. Edits and reverts (with the
 * text they changed), corrections (`supersede`, `restore`), feedback (`wrong`, `outdated`, `useful`), merges,
 * releases and an admin's review (`keep`). Who, when and why; deleted with the observation when it is forgotten (a
 * reason or an edit's `changes` may repeat its text). src/corrections/ writes it; version n+1 is the n-th row by id.
 */
export const observationEvents = sqliteTable(
  'observation_events',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    teamId: integer('team_id')
      .notNull()
      .references(() => teams.id),
    observationId: integer('observation_id')
      .notNull()
      .references(() => observations.id),
    action: text('action').notNull(),
    /** The record that replaces it (`supersede` only). */
    byObservationId: integer('by_observation_id'),
    /** The person who acted (for the observer: the session's user). */
    actorUserId: integer('actor_user_id'),
    /** `user`, or `observer` when the observer proposed it. */
    actor: text('actor').notNull().default('user'),
    reason: text('reason'),
    createdAt: integer('created_at').notNull(),
    /**
     * What the act changed in the record's own text (an edit, a revert): JSON `{field: {from, to}}` for each of
     * title, subtitle, narrative, facts, concepts, files_read, files_modified that changed (lists as lists). Null for
     * acts that change only its state (supersede, flags, merges, reviews: src/corrections/versions-model.ts derives
     * those from `action` and `by_observation_id`). Every row is a version of the record; creation is version 1.
     */
    changes: text('changes'),
  },
  (t) => [
    index('idx_obs_events_obs').on(t.observationId, t.id),
    // The merges a team's consolidation made, newest first (the review queue lists them, undo finds them).
    index('idx_obs_events_merge').on(t.teamId, t.createdAt).where(sql`action = 'merge'`),
  ],
);

/**
 * Per observation: how often sessions fetched it (MCP get_observations, timeline), feedback counted once per
 * person, and its review state (`pending` while flagged wrong or outdated and not reviewed: out of the context
 * index; `kept` once an admin kept it). One row per observation that has any of these.
 */
export const observationSignals = sqliteTable(
  'observation_signals',
  {
    observationId: integer('observation_id')
      .primaryKey()
      .references(() => observations.id),
    teamId: integer('team_id')
      .notNull()
      .references(() => teams.id),
    fetched: integer('fetched').notNull().default(0),
    useful: integer('useful').notNull().default(0),
    wrong: integer('wrong').notNull().default(0),
    outdated: integer('outdated').notNull().default(0),
    review: text('review'),
    updatedAt: integer('updated_at').notNull(),
    /** Sessions that were given the record (index, prompt or file context) and then fetched it (src/receipts/). */
    used: integer('used').notNull().default(0),
  },
  (t) => [index('idx_obs_signals_review').on(t.teamId, t.review).where(sql`review IS NOT NULL`)],
);

/**
 * A team move's change log (src/transfer/move-job.ts, copy first): while `move_tracking` holds a live row for a
 * team on a database, the triggers of migrations/0024_move_changes.sql note every insert, update and delete of
 * that team's rows there (which table, the row's id, and for a row deleted the keys that name it on another
 * database: a session key with a content hash or a prompt number, a project or alias key). The move copies while
 * the team writes, then copies what the log names; never the rows' text. `until` is the tracking's lease (ms
 * epoch; the triggers compare it with the database's clock): a move that died stops being tracked by itself.
 */
export const moveTracking = sqliteTable('move_tracking', {
  teamId: integer('team_id').primaryKey(),
  moveId: text('move_id').notNull(),
  until: integer('until').notNull(),
});

export const moveChanges = sqliteTable(
  'move_changes',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    teamId: integer('team_id').notNull(),
    tbl: text('tbl').notNull(),
    rowId: integer('row_id'),
    k1: text('k1'),
    k2: text('k2'),
  },
  (t) => [index('idx_move_changes_team').on(t.teamId, t.seq)],
);

/**
 * Changes waiting for an admin (issue 38, team setting `consolidation: review`): a merge consolidation found, a
 * correction the observer proposed. One row per record a proposal would change: a merge is one row per source
 * (`by_observation_id` the record that would stand for it, the group), a correction one row (`supersede`: replaced
 * by `by_observation_id`). Accepting applies it as versions of those records;
 * discarding deletes the rows and leaves nothing. A forgotten record takes every proposal naming it along (ON
 * DELETE CASCADE, both columns), whatever path forgets it. src/proposals/ writes it.
 */
export const proposals = sqliteTable(
  'proposals',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    teamId: integer('team_id')
      .notNull()
      .references(() => teams.id),
    kind: text('kind', { enum: ['merge', 'supersede'] }).notNull(),
    observationId: integer('observation_id')
      .notNull()
      .references(() => observations.id, { onDelete: 'cascade' }),
    byObservationId: integer('by_observation_id').references(() => observations.id, { onDelete: 'cascade' }),
    /** Why, in cairn's words (a merge's similarity) or the observer's (its reason, redacted like every stored text). */
    reason: text('reason'),
    /** `consolidation` or `observer`. */
    actor: text('actor').notNull(),
    /** The job's starter or the session's user, when known. */
    actorUserId: integer('actor_user_id'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    // One waiting proposal of a kind per record: a run that finds the same change again adds nothing.
    unique().on(t.teamId, t.kind, t.observationId),
    index('idx_proposals_by').on(t.byObservationId),
    index('idx_proposals_obs').on(t.observationId),
    check('proposals_kind', sql`kind IN ('merge','supersede')`),
  ],
);

/** Every table above, for the schema-drift test. */
/**
 * Primed notes someone forgot (src/recall/prime.ts): the note's content hash (sha256 of the project id, kind, title and
 * text, first 16 hex digits), never its text, so priming the project again does not bring it back. Deleted with the
 * project (db/forget.ts deleteProject) and with the team's rows when a team moves off a database.
 */
export const primeTombstones = sqliteTable(
  'prime_tombstones',
  {
    teamId: integer('team_id').notNull(),
    projectId: integer('project_id').notNull(),
    hash: text('hash').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.projectId, t.hash] })],
);

/**
 * A reader's checkout as its device last reported it for a project (src/evidence/checkout.ts): the entries of the
 * files and branches the server asked about, keyed by hashes (src/shared/evidence.ts: no path, branch or name in
 * the clear), the digest they were reported under, and what tool events of its sessions changed since (`overlay`,
 * cleared by the next report). Every record read for that device is judged against it. `device_id` 0: a token
 * without a device.
 */
export const checkouts = sqliteTable(
  'checkouts',
  {
    teamId: integer('team_id').notNull(),
    projectId: integer('project_id').notNull(),
    userId: integer('user_id').notNull(),
    deviceId: integer('device_id').notNull().default(0),
    head: text('head'),
    branch: text('branch'),
    trunk: text('trunk'),
    /** Abbreviated commits reachable from HEAD or the trunk, comma-separated (src/shared/git.ts GitView). */
    history: text('history').notNull().default(''),
    digest: text('digest').notNull(),
    entries: text('entries').notNull().default('{}'),
    overlay: text('overlay').notNull().default('{}'),
    reportedAt: integer('reported_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.teamId, t.projectId, t.userId, t.deviceId] }),
    // A reader's checkouts of every project (search and MCP judge records of any project), and a state by digest.
    index('idx_checkouts_owner').on(t.teamId, t.userId, t.deviceId),
    index('idx_checkouts_digest').on(t.teamId, t.projectId, t.digest),
  ],
);

/**
 * The team's digest (src/digest/, issue 36), one row per team on the directory: the period it last tried and how many
 * attempts that took, when one last went out and up to when it covered, and the failure while it fails (an error
 * text, never the digest's content). GET /api/admin/health shows it.
 */
export const digestRuns = sqliteTable('digest_runs', {
  teamId: integer('team_id')
    .primaryKey()
    .references(() => teams.id),
  period: text('period').notNull(),
  attempts: integer('attempts').notNull().default(0),
  lastAttemptAt: integer('last_attempt_at'),
  lastOkAt: integer('last_ok_at'),
  lastError: text('last_error'),
  failingSince: integer('failing_since'),
  sentPeriod: text('sent_period'),
  sentUntil: integer('sent_until'),
});

/**
 * When this database began keeping use times (migration 0027, one row): no record's fading clock starts earlier, so
 * an upgrade does not drop every older record from the index at once (nothing recorded their use before).
 */
export const fadeEpoch = sqliteTable('fade_epoch', {
  id: integer('id').primaryKey(),
  at: integer('at').notNull(),
});

/**
 * Receipts (src/receipts/): which records each injection of a session sent (SessionStart index, prompt context, file
 * context, MCP answers) and how each was judged then (src/shared/evidence.ts). One row per session and record, at
 * most SESSION_RECEIPTS_MAX a session (oldest dropped), plus the session's start mark (`observation_id` NULL: who,
 * which device and project, when). Memory metadata: deleted with the record (ON DELETE CASCADE), with its session
 * and with the session's project (db/forget.ts); read only through the visibility rule. `channels`: bits of
 * RECEIPT_CHANNELS.
 */
export const receipts = sqliteTable(
  'receipts',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    teamId: integer('team_id').notNull(),
    sessionKey: text('session_key').notNull(),
    projectId: integer('project_id').notNull(),
    userId: integer('user_id').notNull(),
    deviceId: integer('device_id').notNull().default(0),
    observationId: integer('observation_id').references(() => observations.id, { onDelete: 'cascade' }),
    channels: integer('channels').notNull().default(0),
    evidence: text('evidence').notNull().default('unknown'),
    reasons: text('reasons').notNull().default(''),
    sent: integer('sent').notNull().default(1),
    firstAt: integer('first_at').notNull(),
    lastAt: integer('last_at').notNull(),
    /** When the session fetched it after an injection had sent it (counted once as `used` in its signals). */
    usedAt: integer('used_at'),
  },
  (t) => [
    uniqueIndex('idx_receipts_record').on(t.teamId, t.sessionKey, t.observationId),
    // A deleted observation's receipts go with it (the cascade looks them up by id).
    index('idx_receipts_observation').on(t.observationId),
    index('idx_receipts_project').on(t.teamId, t.projectId),
    // A device's latest session (MCP answers carry no session id; `cairn why` without one).
    index('idx_receipts_start').on(t.teamId, t.userId, t.deviceId, t.firstAt).where(sql`observation_id IS NULL`),
  ],
);

export const allTables = {
  teams,
  users,
  devices,
  tokens,
  projects,
  projectAliases,
  sessions,
  prompts,
  observations,
  observationFiles,
  summaries,
  auditLog,
  localVectors,
  localVectorGenerations,
  observerUsage,
  teamShards,
  maintenanceRuns,
  observationEvents,
  observationSignals,
  primeTombstones,
  moveTracking,
  moveChanges,
  proposals,
  checkouts,
  digestRuns,
  fadeEpoch,
  receipts,
};

export type Team = typeof teams.$inferSelect;
export type User = typeof users.$inferSelect;
export type Device = typeof devices.$inferSelect;
export type Token = typeof tokens.$inferSelect;
export type Project = typeof projects.$inferSelect;
export type Session = typeof sessions.$inferSelect;
export type Prompt = typeof prompts.$inferSelect;
export type Observation = typeof observations.$inferSelect;
export type NewObservation = typeof observations.$inferInsert;
export type Summary = typeof summaries.$inferSelect;
export type NewSummary = typeof summaries.$inferInsert;
export type AuditRow = typeof auditLog.$inferSelect;
export type ObserverUsage = typeof observerUsage.$inferSelect;
export type ObservationEvent = typeof observationEvents.$inferSelect;
