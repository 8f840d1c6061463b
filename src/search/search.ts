// searchObservations: FTS5 (AND first, OR to fill) fused with vector neighbours by RRF, scoped to what the caller may read.
import type { AuthContext } from '../auth/types';
import { resolveVisibleProjects } from '../db/projects';
import { loadViewer, visibleObservations, type SqlFragment } from '../db/visibility';
import type { CairnEnv } from '../env';
import { AppError } from '../lib/errors';
import { parseWith } from '../lib/validate';
import { getVectorAdapters } from '../vectors/adapters';
import type { VectorAdapters } from '../vectors/types';
import { BM25_WEIGHTS, buildFtsQuery, pathLikeTerms, scopeMatch } from './fts-query';
import { SearchParams, filterSql, hasFilter, type SearchInput } from './params';
import { reciprocalRankFusion } from './rrf';

export interface SearchResult {
  id: number;
  createdAt: number;
  type: string;
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

const BM25 = `bm25(observations_fts, ${BM25_WEIGHTS.join(', ')})`;
const TOKENS = `CAST((length(coalesce(o.title, '')) + length(coalesce(o.subtitle, '')) + length(coalesce(o.narrative, '')) + length(o.facts) + 3) / 4 AS INTEGER)`;

interface Scope {
  teamId: number;
  where: SqlFragment;
  projectIds: number[] | null;
}

async function scopeFor(env: CairnEnv, auth: AuthContext, p: SearchParams): Promise<Scope | null> {
  const [viewer, projects] = await Promise.all([
    loadViewer(env.DB, auth),
    p.project.length ? resolveVisibleProjects(env.DB, auth, p.project) : Promise.resolve(null),
  ]);
  const projectIds = projects ? projects.map((r) => r.id) : null;
  if (projectIds && projectIds.length === 0) return null; // unknown, invisible and foreign projects all look alike: empty
  const vis = visibleObservations(viewer, 'o');
  const f = filterSql(p, projectIds);
  return { teamId: auth.teamId, where: { sql: `${vis.sql} AND ${f.sql}`, params: [...vis.params, ...f.params] }, projectIds };
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
  const full = all === any ? '1' : 'o.id IN (SELECT rowid FROM observations_fts WHERE observations_fts MATCH ?)';
  const { results } = await db
    .prepare(
      `WITH m AS MATERIALIZED (
         SELECT o.id AS id, ${BM25} AS rank, ${full} AS full
           FROM observations_fts CROSS JOIN observations o ON o.id = observations_fts.rowid
          WHERE observations_fts MATCH ? AND ${scope.where.sql})
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
  const all = scopeMatch(allTerms, scope.projectIds);
  const any = allTerms === anyTerms ? all : scopeMatch(anyTerms, scope.projectIds);
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

const SELECT_ROWS = `SELECT o.id, o.created_at, o.type, o.title, p.key AS project_key, u.handle AS author, ${TOKENS} AS tokens
  FROM observations o JOIN projects p ON p.id = o.project_id JOIN users u ON u.id = o.author_user_id`;

/** Rows for `ids` that pass the scope; the scope is re-applied so vector hits never bypass visibility. */
async function hydrate(db: D1Database, ids: number[], scope: Scope): Promise<Map<number, Row>> {
  if (ids.length === 0) return new Map();
  const { results } = await db
    .prepare(`${SELECT_ROWS} WHERE o.id IN (SELECT value FROM json_each(?)) AND ${scope.where.sql}`)
    .bind(JSON.stringify(ids), ...scope.where.params)
    .all<Row>();
  return new Map(results.map((r) => [r.id, r]));
}

const toResult = (r: Row, score: number): SearchResult => ({
  id: r.id,
  createdAt: r.created_at,
  type: r.type,
  title: r.title,
  projectKey: r.project_key,
  author: r.author,
  tokens: r.tokens,
  score: Math.round(score * 1e5) / 1e5,
});

async function filterOnly(db: D1Database, p: SearchParams, scope: Scope): Promise<SearchResponse> {
  const [{ results }, count] = await Promise.all([
    db
      .prepare(`${SELECT_ROWS} WHERE ${scope.where.sql} ORDER BY o.created_at DESC, o.id DESC LIMIT ? OFFSET ?`)
      .bind(...scope.where.params, p.limit, p.offset)
      .all<Row>(),
    db.prepare(`SELECT count(*) AS n FROM observations o WHERE ${scope.where.sql}`).bind(...scope.where.params).first<{ n: number }>(),
  ]);
  return { results: results.map((r) => toResult(r, 0)), total: count?.n ?? 0, mode: 'fts' };
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
  env: CairnEnv,
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
      excludeProjectIds: scope.projectIds ? undefined : await hiddenProjectIds(env.DB, auth),
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

/**
 * Searches the observations `auth` may read. Throws AppError(400) for invalid params or when there is
 * neither a query nor a filter. `input` takes HTTP query values or MCP arguments as they come.
 */
export async function searchObservations(env: CairnEnv, auth: AuthContext, input: SearchInput, deps: SearchDeps = {}): Promise<SearchResponse> {
  const p = parseWith(SearchParams, input);
  if (!p.q && !hasFilter(p)) throw new AppError(400, 'query_required', 'Give a query (q) or at least one filter.');
  const tm = deps.timings;
  const scope = await timed(tm, 'scope', scopeFor(env, auth, p));
  if (!scope) return { results: [], total: 0, mode: 'fts' };
  const fts = p.q ? buildFtsQuery(p.q) : null;
  if (!p.q) return filterOnly(env.DB, p, scope);
  // Text with nothing searchable in it (punctuation, emoji) matches nothing, whatever the filters say.
  if (!fts?.all || !fts.any) return { results: [], total: 0, mode: 'fts' };

  const want = p.offset + p.limit;
  const pool = Math.min(1000, Math.max(want, 60));
  const adapters = p.mode === 'fts' ? null : deps.vectors === undefined ? getVectorAdapters(env) : deps.vectors;
  const paths = pathLikeTerms(p.q);
  // Send the SQL first: the embedder runs synchronously until its first await, so starting it first would
  // leave the database idle while the query is embedded.
  const ftsPromise = timed(tm, 'fts', ftsSearch(env.DB, fts.all, fts.any, scope, pool));
  const filesPromise = timed(tm, 'files', fileHits(env.DB, paths, scope, pool));
  const vectorPromise = adapters ? vectorIds(env, adapters, p.q, auth, p, scope, Math.min(100, pool), deps.vectorTimeoutMs ?? 2000) : Promise.resolve(null);
  const [{ rows: ranked, total }, files, vec] = await Promise.all([ftsPromise, filesPromise, timed(tm, 'vector', vectorPromise)]);
  // All-terms matches outrank partial ones; the OR list only fills in after them. Rows that touched a named
  // file rank with the all-terms matches (first when the query is nothing but file names).
  const onlyPaths = paths.length > 0 && fts.terms.length === paths.length;
  const fileRanked = files.map((id) => ({ id, rank: 0 }));
  const strict = ranked.filter((r) => r.full === 1);
  const loose = ranked.filter((r) => r.full !== 1);
  const ordered = onlyPaths ? [...fileRanked, ...ranked] : [...strict, ...fileRanked, ...loose];
  const seen = new Set<number>();
  const ftsList = ordered.filter((r) => !seen.has(r.id) && !!seen.add(r.id));
  const fileOnly = files.filter((id) => !ranked.some((r) => r.id === id)).length;

  if (vec === null) {
    const page = ftsList.slice(p.offset, want);
    const rows = await timed(tm, 'hydrate', hydrate(env.DB, page.map((r) => r.id), scope));
    const results = page.flatMap((r) => (rows.has(r.id) ? [toResult(rows.get(r.id)!, -r.rank)] : []));
    return { results, total: total + fileOnly, mode: 'fts' };
  }

  const fused = reciprocalRankFusion([ftsList.map((r) => r.id), vec]);
  // FTS ids are already scoped; only vector ids can drop out, so want + |vec| candidates always fill the page.
  const rows = await timed(tm, 'hydrate', hydrate(env.DB, [...new Set([...fused.slice(0, want + vec.length).map((f) => f.id), ...vec])], scope));
  const allowed = fused.filter((f) => rows.has(f.id));
  const ftsSet = new Set(ftsList.map((r) => r.id));
  const vectorOnly = allowed.filter((f) => !ftsSet.has(f.id)).length;
  const results = allowed.slice(p.offset, want).map((f) => toResult(rows.get(f.id)!, f.score));
  return { results, total: total + fileOnly + vectorOnly, mode: 'hybrid' };
}
