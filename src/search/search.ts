// searchObservations: FTS5 (AND first, OR to fill) over observations, summaries and prompts, observations fused with vectors by weighted RRF, scoped to what the caller may read.
import type { AuthContext } from '../auth/types';
import { resolveVisibleProjects } from '../db/projects';
import { loadViewer, visibleObservations, visiblePrompts, visibleSummaries, type SqlFragment, type Viewer } from '../db/visibility';
import type { CairnEnv } from '../env';
import { AppError } from '../lib/errors';
import { parseWith } from '../lib/validate';
import { getVectorAdapters } from '../vectors/adapters';
import type { VectorAdapters } from '../vectors/types';
import { BM25_WEIGHTS, buildFtsQuery, pathLikeTerms, PROMPT_BM25_WEIGHTS, scopeMatch, SUMMARY_BM25_WEIGHTS, type FtsQuery } from './fts-query';
import { appliesTo, filterSql, hasFilter, kindsOf, SearchParams, type RecordKind, type SearchInput } from './params';
import { vectorWeightFor } from './config';
import { weightedFusion } from './fusion';
import { reciprocalRankFusion } from './rrf';
import { teamDb } from '../db/shards';

export interface SearchResult {
  /** Which table `id` belongs to; text output writes `#12`, `S12` (summary) or `P12` (prompt). */
  kind: RecordKind;
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
  /** Higher is better; comparable only within one response. */
  score: number;
}

export interface SearchResponse {
  results: SearchResult[];
  total: number;
  mode: 'hybrid' | 'fts';
}

export interface SearchDeps {
  /** Null disables the vector side; default picks adapters from env. */
  vectors?: VectorAdapters | null;
  /** The vector side is dropped when it takes longer than this (it must never hold search hostage). */
  vectorTimeoutMs?: number;
  /** Filled with phase durations in ms (for the Server-Timing header). */
  timings?: Record<string, number>;
}

/** Runs `work` and records its duration under `name` when timings are wanted. */
async function timed<T>(timings: Record<string, number> | undefined, name: string, work: Promise<T>): Promise<T> {
  if (!timings) return work;
  const t = Date.now();
  try {
    return await work;
  } finally {
    timings[name] = Date.now() - t;
  }
}

const TOKENS = `CAST((length(coalesce(o.title, '')) + length(coalesce(o.subtitle, '')) + length(coalesce(o.narrative, '')) + length(o.facts) + 3) / 4 AS INTEGER)`;
const SUMMARY_TOKENS = `CAST((length(s.request) + length(s.investigated) + length(s.learned) + length(s.completed) + length(s.next_steps) + length(coalesce(s.notes, '')) + 3) / 4 AS INTEGER)`;
const SUMMARY_TITLE = `substr(coalesce(nullif(s.request, ''), nullif(s.learned, ''), nullif(s.completed, ''), nullif(s.investigated, ''), nullif(s.next_steps, ''), s.notes), 1, 300)`;

/** One searchable record table: its FTS index, ranking weights, visibility rule and the columns of a result row. */
interface Source {
  kind: RecordKind;
  table: string;
  fts: string;
  alias: string;
  bm25: string;
  /** The FTS index has the `fts_scope` column (observations only), so scopeMatch may narrow it. */
  scoped: boolean;
  visible(v: Viewer, alias: string): SqlFragment;
  /** SELECT … FROM yielding id, created_at, type, title, project_key, author, tokens for rows aliased `alias`. */
  select: string;
}

const bm25 = (fts: string, weights: readonly number[]) => `bm25(${fts}, ${weights.join(', ')})`;
const joins = (a: string) => `JOIN projects p ON p.id = ${a}.project_id JOIN users u ON u.id = ${a}.author_user_id`;

const SOURCES: Record<RecordKind, Source> = {
  observation: {
    kind: 'observation', table: 'observations', fts: 'observations_fts', alias: 'o', bm25: bm25('observations_fts', BM25_WEIGHTS), scoped: true,
    visible: visibleObservations,
    select: `SELECT o.id, o.created_at, o.type, o.title, p.key AS project_key, u.handle AS author, ${TOKENS} AS tokens
  FROM observations o ${joins('o')}`,
  },
  summary: {
    kind: 'summary', table: 'summaries', fts: 'summaries_fts', alias: 's', bm25: bm25('summaries_fts', SUMMARY_BM25_WEIGHTS), scoped: false,
    visible: visibleSummaries,
    select: `SELECT s.id, s.created_at, 'summary' AS type, ${SUMMARY_TITLE} AS title, p.key AS project_key, u.handle AS author, ${SUMMARY_TOKENS} AS tokens
  FROM summaries s ${joins('s')}`,
  },
  // Prompts use `visiblePrompts` as it is: team-visible projects, or the viewer's own private ones.
  prompt: {
    kind: 'prompt', table: 'prompts', fts: 'prompts_fts', alias: 'pm', bm25: bm25('prompts_fts', PROMPT_BM25_WEIGHTS), scoped: false,
    visible: visiblePrompts,
    select: `SELECT pm.id, pm.created_at, 'prompt' AS type, substr(pm.text, 1, 300) AS title, p.key AS project_key, u.handle AS author,
    CAST((length(pm.text) + 3) / 4 AS INTEGER) AS tokens
  FROM prompts pm ${joins('pm')}`,
  },
};

interface Scope {
  source: Source;
  teamId: number;
  /** The team's database (its shard, src/db/shards.ts). */
  db: D1Database;
  where: SqlFragment;
  projectIds: number[] | null;
}

/** One scope per kind asked for and not excluded by an observation-only filter; none when no project is visible. */
async function scopesFor(env: CairnEnv, auth: AuthContext, p: SearchParams): Promise<Scope[]> {
  const db = await teamDb(env, auth.teamId);
  const [viewer, projects] = await Promise.all([
    loadViewer(db, auth),
    p.project.length ? resolveVisibleProjects(db, auth, p.project) : Promise.resolve(null),
  ]);
  const projectIds = projects ? projects.map((r) => r.id) : null;
  if (projectIds && projectIds.length === 0) return []; // unknown, invisible and foreign projects all look alike: empty
  return kindsOf(p.kind)
    .filter((k) => appliesTo(p, k))
    .map((k) => {
      const source = SOURCES[k];
      const vis = source.visible(viewer, source.alias);
      const f = filterSql(p, projectIds, k, source.alias);
      return { source, teamId: auth.teamId, db, where: { sql: `${vis.sql} AND ${f.sql}`, params: [...vis.params, ...f.params] }, projectIds };
    });
}

interface Ranked {
  id: number;
  rank: number;
  /** 1 when the row matches every term (the AND query), 0 for a partial match. */
  full: number;
  total: number;
}

/**
 * One statement for ranking and counting: rows matching any term, all-terms matches first, then bm25.
 * CROSS JOIN pins the FTS index as the outer loop; with a plain JOIN SQLite may walk observations by the
 * team index and re-run the MATCH for every row, which took seconds at 10k rows.
 */
async function ftsRanked(db: D1Database, all: string, any: string, scope: Scope, limit: number): Promise<{ rows: Ranked[]; total: number }> {
  const { fts, table, alias: a, bm25: rank } = scope.source;
  const full = all === any ? '1' : `${a}.id IN (SELECT rowid FROM ${fts} WHERE ${fts} MATCH ?)`;
  const { results } = await db
    .prepare(
      `WITH m AS MATERIALIZED (
         SELECT ${a}.id AS id, ${rank} AS rank, ${full} AS full
           FROM ${fts} CROSS JOIN ${table} ${a} ON ${a}.id = ${fts}.rowid
          WHERE ${fts} MATCH ? AND ${scope.where.sql})
       SELECT id, rank, full, count(*) OVER () AS total FROM m ORDER BY full DESC, rank LIMIT ?`,
    )
    .bind(...(all === any ? [] : [all]), any, ...scope.where.params, limit)
    .all<Ranked>();
  return { rows: results, total: results[0]?.total ?? 0 };
}

/**
 * All-terms matches first; the OR statement runs only when they do not fill the pool. The OR form visits
 * every row containing any term (most of the corpus for common words), the AND form only their intersection.
 * So `total` counts all-terms matches when those alone fill the pool, and any-term matches otherwise.
 */
async function ftsSearch(db: D1Database, allTerms: string, anyTerms: string, scope: Scope, pool: number): Promise<{ rows: Ranked[]; total: number }> {
  const narrow = (expr: string) => (scope.source.scoped ? scopeMatch(expr, scope.projectIds) : expr);
  const all = narrow(allTerms);
  const any = allTerms === anyTerms ? all : narrow(anyTerms);
  const strict = await ftsRanked(db, all, all, scope, pool);
  if (all === any || strict.rows.length >= pool) return strict;
  return ftsRanked(db, all, any, scope, pool);
}

/**
 * Observations that touched a file the query names. File lists are not in the FTS index, so a query like
 * `verify-token.ts` is also looked up in observation_files (exact path or "/<name>" suffix).
 */
async function fileHits(db: D1Database, paths: string[], scope: Scope, limit: number): Promise<number[]> {
  if (paths.length === 0) return [];
  const one = `(f.path = ? OR substr(f.path, -length(?) - 1) = '/' || ?)`;
  const { results } = await db
    .prepare(
      `SELECT DISTINCT o.id AS id, o.created_at FROM observation_files f JOIN observations o ON o.id = f.observation_id
        WHERE f.team_id = ? AND (${paths.map(() => one).join(' OR ')}) AND ${scope.where.sql}
        ORDER BY o.created_at DESC LIMIT ?`,
    )
    .bind(scope.teamId, ...paths.flatMap((x) => [x, x, x]), ...scope.where.params, limit)
    .all<{ id: number }>();
  return results.map((r) => r.id);
}

interface Row {
  id: number;
  created_at: number;
  type: string;
  title: string | null;
  project_key: string;
  author: string;
  tokens: number;
}

/** Rows for `ids` that pass the scope; the scope is re-applied so vector hits never bypass visibility. */
async function hydrate(db: D1Database, ids: number[], scope: Scope): Promise<Map<number, Row>> {
  if (ids.length === 0) return new Map();
  const a = scope.source.alias;
  const { results } = await db
    .prepare(`${scope.source.select} WHERE ${a}.id IN (SELECT value FROM json_each(?)) AND ${scope.where.sql}`)
    .bind(JSON.stringify(ids), ...scope.where.params)
    .all<Row>();
  return new Map(results.map((r) => [r.id, r]));
}

const toResult = (kind: RecordKind, r: Row, score: number): SearchResult => ({
  kind,
  id: r.id,
  createdAt: r.created_at,
  type: r.type,
  title: r.title,
  projectKey: r.project_key,
  author: r.author,
  tokens: r.tokens,
  score: Math.round(score * 1e5) / 1e5,
});

/** The newest rows of one kind that pass the scope, and how many pass it. */
async function newest(db: D1Database, scope: Scope, limit: number, offset: number): Promise<{ rows: Row[]; total: number }> {
  const { table, alias: a, select } = scope.source;
  const [{ results }, count] = await Promise.all([
    db
      .prepare(`${select} WHERE ${scope.where.sql} ORDER BY ${a}.created_at DESC, ${a}.id DESC LIMIT ? OFFSET ?`)
      .bind(...scope.where.params, limit, offset)
      .all<Row>(),
    db.prepare(`SELECT count(*) AS n FROM ${table} ${a} WHERE ${scope.where.sql}`).bind(...scope.where.params).first<{ n: number }>(),
  ]);
  return { rows: results, total: count?.n ?? 0 };
}

/** Filters without a query: newest first; several kinds are merged by time. */
async function filterOnly(db: D1Database, p: SearchParams, scopes: Scope[]): Promise<SearchResponse> {
  if (scopes.length === 1) {
    const { rows, total } = await newest(db, scopes[0]!, p.limit, p.offset);
    return { results: rows.map((r) => toResult(scopes[0]!.source.kind, r, 0)), total, mode: 'fts' };
  }
  const lists = await Promise.all(scopes.map((s) => newest(db, s, p.offset + p.limit, 0)));
  const merged = lists
    .flatMap((l, i) => l.rows.map((r) => toResult(scopes[i]!.source.kind, r, 0)))
    .sort((x, y) => y.createdAt - x.createdAt || y.id - x.id);
  return { results: merged.slice(p.offset, p.offset + p.limit), total: lists.reduce((n, l) => n + l.total, 0), mode: 'fts' };
}

/**
 * The team's projects the caller may not read (other users' private ones). Vectorize filters must stay under
 * 2 KB, so past 100 ids the list is not sent and visibility rests on the D1 re-check alone.
 */
async function hiddenProjectIds(db: D1Database, auth: AuthContext): Promise<number[] | undefined> {
  const { results } = await db
    .prepare(`SELECT id FROM projects WHERE team_id = ? AND visibility = 'private' AND (owner_user_id IS NULL OR owner_user_id != ?) LIMIT 101`)
    .bind(auth.teamId, auth.userId)
    .all<{ id: number }>();
  return results.length && results.length <= 100 ? results.map((r) => r.id) : undefined;
}

async function vectorIds(
  adapters: VectorAdapters,
  q: string,
  auth: AuthContext,
  p: SearchParams,
  scope: Scope,
  topK: number,
  timeoutMs: number,
): Promise<number[] | null> {
  const work = (async () => {
    const [vec] = await adapters.embedder.embed([q]);
    if (!vec) return [];
    const matches = await adapters.index.query(vec, {
      teamId: auth.teamId,
      projectIds: scope.projectIds ?? undefined,
      excludeProjectIds: scope.projectIds ? undefined : await hiddenProjectIds(scope.db, auth),
      types: p.type.length ? p.type : undefined,
      topK,
    });
    return matches.filter((m) => m.score >= adapters.embedder.minScore).map((m) => m.id);
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs)));
  try {
    return await Promise.race([work, late]);
  } catch (err) {
    console.warn('vector search failed; answering from FTS alone', { message: (err as Error).message });
    return null;
  } finally {
    clearTimeout(timer);
    work.catch(() => undefined);
  }
}

/** One kind's ranked list, best first, before the page is cut. */
interface Ranking {
  scope: Scope;
  /** Ids in rank order; all pass the scope (hybrid lists are checked while ranking). */
  items: { id: number; score: number }[];
  total: number;
  mode: 'hybrid' | 'fts';
  /** Rows already loaded while ranking; the rest are loaded for the page only. */
  rows: Map<number, Row>;
}

interface RankInput {
  q: string;
  fts: { all: string; any: string; terms: string[] };
  pool: number;
  want: number;
}

/** Summaries and prompts: FTS only (the vector index holds observations). */
async function rankText(db: D1Database, scope: Scope, r: RankInput, tm: Record<string, number> | undefined): Promise<Ranking> {
  const { rows, total } = await timed(tm, `fts_${scope.source.kind}`, ftsSearch(db, r.fts.all, r.fts.any, scope, r.pool));
  return { scope, items: rows.map((x) => ({ id: x.id, score: -x.rank })), total, mode: 'fts', rows: new Map() };
}

/** Observations: FTS, files named in the query, and vector neighbours when available. */
async function rankObservations(env: CairnEnv, auth: AuthContext, p: SearchParams, scope: Scope, r: RankInput, deps: SearchDeps): Promise<Ranking> {
  const tm = deps.timings;
  const { q, fts, pool, want } = r;
  const candidate = p.mode === 'fts' ? null : deps.vectors === undefined ? getVectorAdapters(env) : deps.vectors;
  // An embedder with weight 0 (the offline one) is not asked at all: the default is then keyword search.
  const weight = candidate ? vectorWeightFor(candidate.embedder.name, env.CAIRN_VECTOR_WEIGHT) : 0;
  const adapters = weight > 0 ? candidate : null;
  const paths = pathLikeTerms(q);
  // Send the SQL first: the embedder runs synchronously until its first await, so starting it first would
  // leave the database idle while the query is embedded.
  const ftsPromise = timed(tm, 'fts', ftsSearch(scope.db, fts.all, fts.any, scope, pool));
  const filesPromise = timed(tm, 'files', fileHits(scope.db, paths, scope, pool));
  const vectorPromise = adapters ? vectorIds(adapters, q, auth, p, scope, Math.min(100, pool), deps.vectorTimeoutMs ?? 2000) : Promise.resolve(null);
  const [{ rows: ranked, total }, files, vec] = await Promise.all([ftsPromise, filesPromise, timed(tm, 'vector', vectorPromise)]);
  // All-terms matches outrank partial ones; the OR list only fills in after them. Rows that touched a named
  // file rank with the all-terms matches (first when the query is nothing but file names).
  const onlyPaths = paths.length > 0 && fts.terms.length === paths.length;
  const fileRanked = files.map((id) => ({ id, rank: 0, exact: true }));
  const strict = ranked.filter((x) => x.full === 1).map((x) => ({ id: x.id, rank: x.rank, exact: true }));
  const loose = ranked.filter((x) => x.full !== 1).map((x) => ({ id: x.id, rank: x.rank, exact: false }));
  const ordered = onlyPaths ? [...fileRanked, ...strict, ...loose] : [...strict, ...fileRanked, ...loose];
  const seen = new Set<number>();
  const ftsList = ordered.filter((x) => !seen.has(x.id) && !!seen.add(x.id));
  const fileOnly = files.filter((id) => !ranked.some((x) => x.id === id)).length;

  if (vec === null) {
    return { scope, items: ftsList.map((x) => ({ id: x.id, score: -x.rank })), total: total + fileOnly, mode: 'fts', rows: new Map() };
  }
  const fused = weightedFusion(ftsList, vec, { vectorWeight: weight });
  // FTS ids are already scoped; only vector ids can drop out, so want + |vec| candidates always fill the page.
  const rows = await timed(tm, 'hydrate', hydrate(scope.db, [...new Set([...fused.slice(0, want + vec.length).map((f) => f.id), ...vec])], scope));
  const allowed = fused.filter((f) => rows.has(f.id));
  const ftsSet = new Set(ftsList.map((x) => x.id));
  const vectorOnly = allowed.filter((f) => !ftsSet.has(f.id)).length;
  return { scope, items: allowed, total: total + fileOnly + vectorOnly, mode: 'hybrid', rows };
}

/**
 * Cuts the page: one kind's list as it is, several kinds fused by RRF over their ranked lists. Rows not yet
 * loaded are loaded per kind (scope re-applied).
 */
async function pageOf(db: D1Database, rankings: Ranking[], offset: number, want: number, tm: Record<string, number> | undefined): Promise<SearchResult[]> {
  const picked: { ranking: Ranking; id: number; score: number }[] =
    rankings.length === 1
      ? rankings[0]!.items.slice(offset, want).map((it) => ({ ranking: rankings[0]!, ...it }))
      : reciprocalRankFusion(rankings.map((rk, i) => rk.items.map((it) => `${i}:${it.id}`)))
          .slice(offset, want)
          .map((f) => {
            const [i, id] = f.id.split(':').map(Number) as [number, number];
            return { ranking: rankings[i]!, id, score: f.score };
          });
  await timed(tm, 'hydrate_page', Promise.all(
    rankings.map(async (rk) => {
      const missing = picked.filter((x) => x.ranking === rk && !rk.rows.has(x.id)).map((x) => x.id);
      for (const [id, row] of await hydrate(db, missing, rk.scope)) rk.rows.set(id, row);
    }),
  ));
  return picked.flatMap((x) => {
    const row = x.ranking.rows.get(x.id);
    return row ? [toResult(x.ranking.scope.source.kind, row, x.score)] : [];
  });
}

/**
 * Searches what `auth` may read: observations by default, or (`kind`) session summaries, prompts, or all
 * three. Throws AppError(400) for invalid params or when there is neither a query nor a filter. `input`
 * takes HTTP query values or MCP arguments as they come.
 */
export async function searchObservations(env: CairnEnv, auth: AuthContext, input: SearchInput, deps: SearchDeps = {}): Promise<SearchResponse> {
  const p = parseWith(SearchParams, input);
  if (!p.q && !hasFilter(p)) throw new AppError(400, 'query_required', 'Give a query (q) or at least one filter.');
  const tm = deps.timings;
  const scopes = await timed(tm, 'scope', scopesFor(env, auth, p));
  if (scopes.length === 0) return { results: [], total: 0, mode: 'fts' };
  const db = scopes[0]!.db;
  if (!p.q) return filterOnly(db, p, scopes);
  const fts: FtsQuery = buildFtsQuery(p.q);
  // Text with nothing searchable in it (punctuation, emoji) matches nothing, whatever the filters say.
  if (!fts.all || !fts.any) return { results: [], total: 0, mode: 'fts' };

  const want = p.offset + p.limit;
  const r: RankInput = { q: p.q, fts: { all: fts.all, any: fts.any, terms: fts.terms }, pool: Math.min(1000, Math.max(want, 60)), want };
  // Summary and prompt statements go out first; the observation side may then spend time embedding the query.
  const text = scopes.filter((s) => s.source.kind !== 'observation').map((s) => rankText(db, s, r, tm));
  const obs = scopes.filter((s) => s.source.kind === 'observation').map((s) => rankObservations(env, auth, p, s, r, deps));
  const byKind = await Promise.all([...obs, ...text]);
  const results = await pageOf(db, byKind, p.offset, want, tm);
  return { results, total: byKind.reduce((n, k) => n + k.total, 0), mode: byKind.some((k) => k.mode === 'hybrid') ? 'hybrid' : 'fts' };
}
