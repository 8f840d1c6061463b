// The search statements: FTS5 MATCH/bm25 ranking over observations, summaries and prompts, and the plain reads
// that go with it (file hits, result rows, newest rows), all scoped by the one visibility rule. The FTS5
// specifics are written with drizzle's `sql` template here and nowhere else; what can be a query builder is one.
// Ranking policy (bm25 weights, MATCH expressions, fusion) belongs to src/search/ and arrives as arguments.
import { and, count, desc, eq, gte, inArray, lte, sql, type SQL } from 'drizzle-orm';
import { alias, QueryBuilder, type SQLiteTable } from 'drizzle-orm/sqlite-core';
import { runBatch } from './batch';
import { notMerged } from './consolidation';
import { db } from './client';
import type { RecordKind } from './forget';
import { fadeEpoch, observationFiles, observations, projects, prompts, sessions, summaries, users } from './schema';
import { byIds, inJsonList, jsonListIntersects } from './sqlite';
import { canReadObservation, canReadPrompt, canReadSummary, type Viewer } from './visibility';

export type { RecordKind };

/** Filters other than visibility; lists are bound as one JSON parameter each (D1 allows 100 per statement). */
export interface RecordFilter {
  /** null: every project the caller may see. */
  projectIds: number[] | null;
  type: string[];
  concept: string[];
  file: string[];
  author: string[];
  platform: string[];
  since?: number;
  until?: number;
}

/** What one kind's statements may read: built once per search by `recordScope`, passed to every statement. */
export interface RecordScope {
  kind: RecordKind;
  teamId: number;
  projectIds: number[] | null;
  /** The visibility rule AND the filters, over the kind's table alias. */
  where: SQL;
}

const o = alias(observations, 'o');
const s = alias(summaries, 's');
const pm = alias(prompts, 'pm');
const p = alias(projects, 'p');
const u = alias(users, 'u');
const qb = new QueryBuilder();

/**
 * Per kind: its table and alias, its FTS index, the visibility rule, and the index every FTS match is checked
 * through (observations: idx_obs_readable holds what the rule and the filters read, so the 1–2 KB rows are not
 * read for each of thousands of matches; SQLite would pick the primary key without being told).
 */
const SOURCES = {
  observation: {
    table: observations,
    alias: o,
    fts: 'observations_fts',
    visible: (v: Viewer) => canReadObservation(v, o),
    checkedBy: 'INDEXED BY idx_obs_readable',
  },
  summary: {
    table: summaries,
    alias: s,
    fts: 'summaries_fts',
    visible: (v: Viewer) => canReadSummary(v, s),
    checkedBy: '',
  },
  prompt: {
    table: prompts,
    alias: pm,
    fts: 'prompts_fts',
    visible: (v: Viewer) => canReadPrompt(v, pm),
    checkedBy: '',
  },
} as const;

/** The columns of a result row, per kind: title and approximate tokens (chars / 4) computed in SQL. */
const FIELDS = {
  observation: {
    id: o.id,
    createdAt: o.createdAt,
    type: o.type,
    title: o.title,
    projectKey: p.key,
    author: u.handle,
    tokens: sql<number>`CAST((length(coalesce(${o.title}, '')) + length(coalesce(${o.subtitle}, '')) + length(coalesce(${o.narrative}, '')) + length(${o.facts}) + 3) / 4 AS INTEGER)`,
    supersededBy: o.supersededBy,
    // The fading clock (src/db/fading.ts): made, stored or last used, and never before the database's epoch.
    liveAt: sql<
      number | null
    >`max(${o.createdAt}, coalesce(${o.renewedAt}, 0), coalesce((SELECT ${fadeEpoch.at} FROM ${fadeEpoch} WHERE ${fadeEpoch.id} = 1), 0))`,
  },
  summary: {
    id: s.id,
    createdAt: s.createdAt,
    type: sql<string>`'summary'`,
    title: sql<
      string | null
    >`substr(coalesce(nullif(${s.request}, ''), nullif(${s.learned}, ''), nullif(${s.completed}, ''), nullif(${s.investigated}, ''), nullif(${s.nextSteps}, ''), ${s.notes}), 1, 300)`,
    projectKey: p.key,
    author: u.handle,
    tokens: sql<number>`CAST((length(${s.request}) + length(${s.investigated}) + length(${s.learned}) + length(${s.completed}) + length(${s.nextSteps}) + length(coalesce(${s.notes}, '')) + 3) / 4 AS INTEGER)`,
    supersededBy: sql<number | null>`NULL`,
    liveAt: sql<number | null>`NULL`,
  },
  prompt: {
    id: pm.id,
    createdAt: pm.createdAt,
    type: sql<string>`'prompt'`,
    title: sql<string | null>`substr(${pm.text}, 1, 300)`,
    projectKey: p.key,
    author: u.handle,
    tokens: sql<number>`CAST((length(${pm.text}) + 3) / 4 AS INTEGER)`,
    supersededBy: sql<number | null>`NULL`,
    liveAt: sql<number | null>`NULL`,
  },
} as const;

/** One search result's row before scoring. */
export interface RecordRow {
  id: number;
  createdAt: number;
  /** The observation type; `summary` or `prompt` for those kinds. */
  type: string;
  /** Observation title; a summary's request (or first filled field); a prompt's opening text. */
  title: string | null;
  projectKey: string;
  author: string;
  /** Approximate tokens (chars/4) to read the full record. */
  tokens: number;
  /** Observations: what replaced it (its own id: outdated, nothing in its place); null or absent when current. */
  supersededBy?: number | null;
  /** Observations: its fading clock (src/db/fading.ts); null for summaries and prompts. */
  liveAt?: number | null;
}

/** Filters on the kind's table; observation-only ones (type, concept, file) only for observations. */
function filterWhere(kind: RecordKind, f: RecordFilter): SQL[] {
  const a = SOURCES[kind].alias;
  const parts: (SQL | undefined)[] = [f.projectIds ? inJsonList(a.projectId, f.projectIds) : undefined];
  if (kind === 'observation') {
    if (f.type.length) parts.push(inJsonList(o.type, f.type));
    if (f.concept.length) parts.push(jsonListIntersects(o.concepts, f.concept));
    // Stored paths may be absolute or relative: accept the same path or one that ends with "/<given>".
    if (f.file.length) {
      const given = JSON.stringify(f.file.map((file) => file.replace(/^\.\//, '')));
      parts.push(sql`EXISTS (SELECT 1 FROM ${observationFiles} f, json_each(${given}) g WHERE f.observation_id = ${o.id}
          AND (f.path = g.value OR substr(f.path, -length(g.value) - 1) = '/' || g.value))`);
    }
  }
  if (f.author.length) {
    parts.push(
      inArray(
        a.authorUserId,
        qb
          .select({ id: users.id })
          .from(users)
          .where(and(eq(users.teamId, a.teamId), inJsonList(users.handle, f.author))),
      ),
    );
  }
  if (f.platform.length) {
    parts.push(
      inArray(
        a.sessionId,
        qb
          .select({ id: sessions.id })
          .from(sessions)
          .where(and(eq(sessions.teamId, a.teamId), inJsonList(sessions.platform, f.platform))),
      ),
    );
  }
  if (f.since !== undefined) parts.push(gte(a.createdAt, f.since));
  if (f.until !== undefined) parts.push(lte(a.createdAt, f.until));
  return parts.filter((x): x is SQL => x !== undefined);
}

/** The scope of one kind's statements: what the viewer may read, narrowed by the filters. */
export function recordScope(kind: RecordKind, viewer: Viewer, filter: RecordFilter): RecordScope {
  // Consolidated near-duplicates are found through the record that stands for them (src/consolidation/).
  const merged = kind === 'observation' ? notMerged(viewer.teamId, o.id) : undefined;
  const where = and(SOURCES[kind].visible(viewer), ...filterWhere(kind, filter), merged)!;
  return { kind, teamId: viewer.teamId, projectIds: filter.projectIds, where };
}

/** The scope narrowed to rows stored from `since` to `until` (inclusive ms): search's window around a named day. */
export function storedWithin(scope: RecordScope, since: number, until: number): RecordScope {
  const a = SOURCES[scope.kind].alias;
  return { ...scope, where: and(scope.where, gte(a.createdAt, since), lte(a.createdAt, until))! };
}

/** One FTS match: bm25 rank (lower is better) and whether it matched every term. */
export interface FtsRanked {
  id: number;
  rank: number;
  /** 1 when the row matches every term (the AND query), 0 for a partial match. */
  full: number;
  total: number;
}

/**
 * One statement for ranking and counting: rows matching `any`, rows matching `all` first, then bm25 with
 * `weights` (one per FTS column, written into the SQL as numbers). CROSS JOIN pins the FTS index as the outer
 * loop; with a plain JOIN SQLite may walk observations by the team index and re-run the MATCH for every row,
 * which took seconds at 10k rows. Each match is then looked up by id alone: the unary `+` keeps the scope's
 * terms from becoming index keys (`project_id IN (…)` as a key meant one seek per visible project per match,
 * 0.25 s for a common word at 100k rows); they are checked on the row found. The total counts the materialized
 * matches once (`count(*) OVER ()` made SQLite copy all of them into one more temporary table: a third of the
 * statement for a common word). `all` and `any` are MATCH expressions (search/fts-query.ts quotes every term).
 */
export async function ftsRanked(
  d1: D1Database,
  scope: RecordScope,
  match: { all: string; any: string },
  weights: readonly number[],
  limit: number,
): Promise<{ rows: FtsRanked[]; total: number }> {
  const { table, alias: a, fts, checkedBy } = SOURCES[scope.kind];
  const index = sql.raw(fts);
  const rank = sql.raw(`bm25(${fts}, ${weights.map((w) => Number(w)).join(', ')})`);
  const full =
    match.all === match.any ? sql`1` : sql`${a.id} IN (SELECT rowid FROM ${index} WHERE ${index} MATCH ${match.all})`;
  const rows = await db(d1).all<FtsRanked>(sql`WITH m AS MATERIALIZED (
         SELECT ${a.id} AS id, ${rank} AS rank, ${full} AS full
           FROM ${index} CROSS JOIN ${table} ${a} ${sql.raw(checkedBy)} ON ${a.id} = ${index}.rowid
          WHERE ${index} MATCH ${match.any} AND +(${scope.where}))
       SELECT id, rank, full, (SELECT count(*) FROM m) AS total FROM m ORDER BY full DESC, rank LIMIT ${limit}`);
  return { rows, total: rows[0]?.total ?? 0 };
}

/**
 * Observations in scope that touched a file named by `paths` (exact path or "/<name>" suffix), newest first.
 * File lists are not in the FTS index, so a query like `verify-token.ts` is looked up here too.
 */
export async function observationsTouching(
  d1: D1Database,
  paths: string[],
  scope: RecordScope,
  limit: number,
): Promise<number[]> {
  if (paths.length === 0) return [];
  const f = observationFiles;
  const named = paths.map((x) => sql`(${f.path} = ${x} OR substr(${f.path}, -length(${x}) - 1) = '/' || ${x})`);
  // Both forms end in the given path's last segment: idx_obs_files_name finds those rows first.
  const lastSegments = [...new Set(paths.map((x) => x.slice(x.lastIndexOf('/') + 1)))];
  const rows = await db(d1)
    .selectDistinct({ id: o.id, createdAt: o.createdAt })
    .from(f)
    .innerJoin(o, eq(o.id, f.observationId))
    .where(
      and(
        eq(f.teamId, scope.teamId),
        inJsonList(f.basename, lastSegments),
        sql`(${sql.join(named, sql` OR `)})`,
        scope.where,
      ),
    )
    .orderBy(desc(o.createdAt))
    .limit(limit);
  return rows.map((r) => r.id);
}

/** SELECT <result columns> FROM <kind> JOIN projects JOIN users. */
function rowsOf(d1: D1Database, kind: RecordKind) {
  const a = SOURCES[kind].alias;
  return db(d1)
    .select(FIELDS[kind])
    .from(a)
    .innerJoin(p, eq(p.id, a.projectId))
    .innerJoin(u, eq(u.id, a.authorUserId))
    .$dynamic();
}

/** Rows for `ids` that pass the scope; the scope is re-applied so vector hits never bypass visibility. */
export async function recordRows(d1: D1Database, ids: number[], scope: RecordScope): Promise<Map<number, RecordRow>> {
  if (ids.length === 0) return new Map();
  const a = SOURCES[scope.kind].alias;
  const rows: RecordRow[] = await rowsOf(d1, scope.kind).where(byIds(a.id, ids, scope.where));
  return new Map(rows.map((r) => [r.id, r]));
}

/** The newest rows of one kind that pass the scope, and how many pass it. */
export async function newestRecords(
  d1: D1Database,
  scope: RecordScope,
  limit: number,
  offset: number,
): Promise<{ rows: RecordRow[]; total: number }> {
  const a = SOURCES[scope.kind].alias;
  const [rows, counted] = await Promise.all([
    rowsOf(d1, scope.kind).where(scope.where).orderBy(desc(a.createdAt), desc(a.id)).limit(limit).offset(offset),
    db(d1).select({ n: count() }).from(a).where(scope.where).get(),
  ]);
  return { rows: rows as RecordRow[], total: counted?.n ?? 0 };
}

// ---- Index maintenance ----------------------------------------------------------------------------------
// Deleting a row from an external-content FTS5 table (our delete triggers) only adds a delete marker: the
// forgotten terms stay inside the index's segment blobs until the segment holding them is merged with the
// marker. 'optimize' (merge everything at once) and 'rebuild' (reindex every row) grow with the whole index and
// would pass D1's 30 s a statement on a large shard, so neither runs any more: the upkeep job
// (src/search/fts-upkeep.ts) sends bounded 'merge' commands in steps until the index is one segment, and
// refills an index that lost rows (a restore) a window of rows at a time.

export type FtsTable = 'observations_fts' | 'summaries_fts' | 'prompts_fts';

export const ALL_FTS: readonly FtsTable[] = ['observations_fts', 'summaries_fts', 'prompts_fts'];

const CONTENT: Record<FtsTable, SQLiteTable> = {
  observations_fts: observations,
  summaries_fts: summaries,
  prompts_fts: prompts,
};

/** Each index's columns, as its insert trigger fills them from the content table (migrations 0001, 0002). */
const COLUMNS: Record<FtsTable, readonly string[]> = {
  observations_fts: ['title', 'subtitle', 'narrative', 'facts', 'concepts', 'cjk_terms', 'fts_scope'],
  summaries_fts: ['request', 'investigated', 'learned', 'completed', 'next_steps', 'notes', 'cjk_terms'],
  prompts_fts: ['text', 'cjk_terms'],
};

/** The metered binding (statements counted into the invocation, db/meter.ts). */
const raw = (d1: D1Database): D1Database => db(d1).$client;

const CONTENT_NAME: Record<FtsTable, string> = {
  observations_fts: 'observations',
  summaries_fts: 'summaries',
  prompts_fts: 'prompts',
};

/**
 * One bounded incremental merge: every segment of the index is put on one level and merged, writing about
 * `pages` leaf pages (FTS5's 'merge' with a negative count). Answers whether it did any work. The rule is
 * FTS5's own (sqlite.org/fts5.html, "The 'merge' Command"): merge with a negative count until the change count
 * before and after differs by less than two, and the index is optimized as by 'optimize'; D1 reports that
 * difference as meta.changes (test/worker/search/fts-upkeep.test.ts shows both ends on the real index). The same
 * page says a negative count puts a segment written meanwhile on the merging level and restarts the merge; the
 * upkeep job caps its merges a cycle (src/search/fts-upkeep.ts) so writes during a cycle cannot keep it going.
 */
export async function ftsMerge(d1: D1Database, table: FtsTable, pages: number): Promise<boolean> {
  const n = -Math.max(1, Math.floor(pages));
  const r = await raw(d1).prepare(`INSERT INTO ${table}(${table}, rank) VALUES ('merge', ${n})`).run();
  return (r.meta.changes ?? 0) >= 2;
}

/** Segments of the index now (one row of the _idx table per leaf page range, grouped by segment id). */
export async function ftsSegments(d1: D1Database, table: FtsTable): Promise<number> {
  const r = await raw(d1).prepare(`SELECT COUNT(DISTINCT segid) AS n FROM ${table}_idx`).first<{ n: number }>();
  return r?.n ?? 0;
}

/** Pages the index holds (rows of its _data table): what a full merge writes at most once. */
export async function ftsPages(d1: D1Database, table: FtsTable): Promise<number> {
  const r = await raw(d1).prepare(`SELECT COUNT(*) AS n FROM ${table}_data`).first<{ n: number }>();
  return r?.n ?? 0;
}

/**
 * Indexes whose row count differs from their content table's: what a restore from `wrangler d1 export` (which
 * leaves FTS5 tables out) or an import leaves behind. Counted through each index's docsize table.
 */
export async function ftsOutOfStep(d1: D1Database): Promise<FtsTable[]> {
  const d = db(d1);
  const counts = ALL_FTS.map((t) =>
    d.get<{ content: number; indexed: number }>(
      sql`SELECT (SELECT COUNT(*) FROM ${CONTENT[t]}) AS content, (SELECT COUNT(*) FROM ${sql.identifier(`${t}_docsize`)}) AS indexed`,
    ),
  );
  // No bound parameters: drizzle's D1 batch cannot bind them for raw statements.
  const rows = (await runBatch(d, counts)) as ({ content: number; indexed: number } | undefined)[];
  return ALL_FTS.filter((_, i) => {
    const r = rows[i];
    return r !== undefined && r.content !== r.indexed;
  });
}

/** Whether the index holds a row its table no longer has (its terms cannot be deleted one by one: the text is gone). */
export async function ftsHasStrays(d1: D1Database, table: FtsTable): Promise<boolean> {
  const r = await raw(d1)
    .prepare(
      `SELECT EXISTS (SELECT 1 FROM ${table}_docsize x WHERE NOT EXISTS (SELECT 1 FROM ${CONTENT_NAME[table]} c WHERE c.id = x.id)) AS n`,
    )
    .first<{ n: number }>();
  return (r?.n ?? 0) > 0;
}

/**
 * Empties an index whose rows cannot be deleted one by one (strays, after a partial restore). 'delete-all' on an
 * external-content index drops its pages without reading any row: the refill that follows runs in steps.
 */
export async function ftsClear(d1: D1Database, table: FtsTable): Promise<void> {
  await raw(d1).prepare(`INSERT INTO ${table}(${table}) VALUES ('delete-all')`).run();
}

/**
 * Indexes the rows of the window after id `after` (at most `window` ids of the content table) that the index
 * lacks. Answers the window's last id, or null when no row is past `after`. Two statements; repeating a window
 * adds nothing (rows already indexed are skipped).
 */
export async function ftsRefill(
  d1: D1Database,
  table: FtsTable,
  after: number,
  window: number,
): Promise<{ last: number | null; added: number }> {
  const c = CONTENT_NAME[table];
  const edge = await raw(d1)
    .prepare(`SELECT max(id) AS last FROM (SELECT id FROM ${c} WHERE id > ? ORDER BY id LIMIT ?)`)
    .bind(after, window)
    .first<{ last: number | null }>();
  const last = edge?.last ?? null;
  if (last === null) return { last: null, added: 0 };
  const cols = COLUMNS[table].join(', ');
  const r = await raw(d1)
    .prepare(
      `INSERT INTO ${table}(rowid, ${cols}) SELECT id, ${cols} FROM ${c}
        WHERE id > ?1 AND id <= ?2 AND id NOT IN (SELECT id FROM ${table}_docsize WHERE id > ?1 AND id <= ?2)`,
    )
    .bind(after, last)
    .run();
  return { last, added: r.meta.changes ?? 0 };
}
