// searchObservations: FTS5 (AND first, OR to fill) over observations, summaries and prompts, observations fused with vectors by weighted RRF, scoped to what the caller may read.
import type { AuthContext } from '../auth/types';
import { resolveVisibleProjects } from '../db/projects';
import { ftsRanked, newestRecords, observationsTouching, recordRows, recordScope, storedWithin, type FtsRanked, type RecordRow, type RecordScope } from '../db/fts';
import { loadViewer, projectsHiddenFrom } from '../db/visibility';
import type { CairnEnv } from '../env';
import { AppError } from '../lib/errors';
import { parseWith } from '../lib/validate';
import { getVectorAdapters } from '../vectors/adapters';
import type { VectorAdapters, VectorMatch } from '../vectors/types';
import { embedQuery } from '../vectors/query-cache';
import { BM25_WEIGHTS, buildFtsQuery, pathLikeTerms, PROMPT_BM25_WEIGHTS, scopeMatch, SUMMARY_BM25_WEIGHTS, type FtsQuery } from './fts-query';
import { appliesTo, hasFilter, kindsOf, SearchParams, type RecordKind, type SearchInput } from './params';
import { fusionMethodFor, vectorWeightFor } from './config';
import { DIVERSIFY, diversify } from './diversify';
import { dayWindow, liftDated, namedDays } from './dates';
import { scoreFusion, weightedFusion } from './fusion';
import { reciprocalRankFusion } from './rrf';
import { teamDb } from '../db/shards';

/** One result: the record's row (db/fts.ts) and its score. */
export interface SearchResult extends RecordRow {
  /** Which table `id` belongs to; text output writes `#12`, `S12` (summary) or `P12` (prompt). */
  kind: RecordKind;
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
  /** The time "yesterday" and "3 days ago" in a query count from (default: the clock). */
  now?: number;
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

/** Per kind: the bm25 weights of its FTS index and whether that index has the `fts_scope` column (observations only). */
const RANKING: Record<RecordKind, { weights: readonly number[]; scoped: boolean }> = {
  observation: { weights: BM25_WEIGHTS, scoped: true },
  summary: { weights: SUMMARY_BM25_WEIGHTS, scoped: false },
  prompt: { weights: PROMPT_BM25_WEIGHTS, scoped: false },
};

/** One scope per kind asked for and not excluded by an observation-only filter; none when no project is visible. */
async function scopesFor(db: D1Database, auth: AuthContext, p: SearchParams): Promise<RecordScope[]> {
  const [viewer, projects] = await Promise.all([
    loadViewer(db, auth),
    p.project.length ? resolveVisibleProjects(db, auth, p.project) : Promise.resolve(null),
  ]);
  const projectIds = projects ? projects.map((r) => r.id) : null;
  if (projectIds && projectIds.length === 0) return []; // unknown, invisible and foreign projects all look alike: empty
  return kindsOf(p.kind)
    .filter((k) => appliesTo(p, k))
    .map((k) => recordScope(k, viewer, { ...p, projectIds }));
}

/**
 * All-terms matches first; the OR statement runs only when they do not fill the pool. The OR form visits
 * every row containing any term (most of the corpus for common words), the AND form only their intersection.
 * So `total` counts all-terms matches when those alone fill the pool, and any-term matches otherwise.
 */
async function ftsSearch(db: D1Database, allTerms: string, anyTerms: string, scope: RecordScope, pool: number): Promise<{ rows: FtsRanked[]; total: number }> {
  const { weights, scoped } = RANKING[scope.kind];
  const narrow = (expr: string) => (scoped ? scopeMatch(expr, scope.projectIds) : expr);
  const all = narrow(allTerms);
  const any = allTerms === anyTerms ? all : narrow(anyTerms);
  const strict = await ftsRanked(db, scope, { all, any: all }, weights, pool);
  if (all === any || strict.rows.length >= pool) return strict;
  return ftsRanked(db, scope, { all, any }, weights, pool);
}

/**
 * Matches stored within `window` (around days the query names), all-terms matches first, then bm25; empty
 * without a window. One more statement, only for queries that name a day.
 */
async function datedHits(db: D1Database, fts: RankInput['fts'], scope: RecordScope, window: RankInput['window'], pool: number): Promise<number[]> {
  if (!window) return [];
  const { weights, scoped } = RANKING[scope.kind];
  const narrow = (expr: string) => (scoped ? scopeMatch(expr, scope.projectIds) : expr);
  const { rows } = await ftsRanked(db, storedWithin(scope, window.since, window.until), { all: narrow(fts.all), any: narrow(fts.any) }, weights, pool);
  return rows.map((x) => x.id);
}

const toResult = (kind: RecordKind, r: RecordRow, score: number): SearchResult => ({ kind, ...r, score: Math.round(score * 1e5) / 1e5 });

/** Filters without a query: newest first; several kinds are merged by time. */
async function filterOnly(db: D1Database, p: SearchParams, scopes: RecordScope[]): Promise<SearchResponse> {
  if (scopes.length === 1) {
    const { rows, total } = await newestRecords(db, scopes[0]!, p.limit, p.offset);
    return { results: rows.map((r) => toResult(scopes[0]!.kind, r, 0)), total, mode: 'fts' };
  }
  const lists = await Promise.all(scopes.map((s) => newestRecords(db, s, p.offset + p.limit, 0)));
  const merged = lists
    .flatMap((l, i) => l.rows.map((r) => toResult(scopes[i]!.kind, r, 0)))
    .sort((x, y) => y.createdAt - x.createdAt || y.id - x.id);
  return { results: merged.slice(p.offset, p.offset + p.limit), total: lists.reduce((n, l) => n + l.total, 0), mode: 'fts' };
}

/**
 * Vectorize filters must stay under 2 KB, so past 100 hidden projects the list is not sent and visibility
 * rests on the D1 re-check alone.
 */
async function hiddenProjectIds(db: D1Database, auth: AuthContext): Promise<number[] | undefined> {
  const ids = await projectsHiddenFrom(db, auth, 100);
  return ids.length && ids.length <= 100 ? ids : undefined;
}

/**
 * The query's vector, asked for as soon as the query text is known (before the scope is read from D1), so the
 * model works while the database does. Null when the search uses no vectors: `mode=fts`, no observation kind,
 * no adapters, or an embedder weighted 0 (the offline one is not asked at all: the default is then keyword search).
 */
interface Semantic {
  adapters: VectorAdapters;
  weight: number;
  vector: Promise<number[] | undefined>;
}

function startSemantic(env: CairnEnv, p: SearchParams, q: string, deps: SearchDeps): Semantic | null {
  if (p.mode === 'fts' || !kindsOf(p.kind).some((k) => k === 'observation' && appliesTo(p, k))) return null;
  const adapters = deps.vectors === undefined ? getVectorAdapters(env) : deps.vectors;
  const weight = adapters ? vectorWeightFor(adapters.embedder.name, env.CAIRN_VECTOR_WEIGHT) : 0;
  if (!adapters || weight <= 0) return null;
  const vector = timed(deps.timings, 'embed', embedQuery(adapters.embedder, q));
  // Observed by vectorIds when the search gets there; a search that returns early must not leave it unhandled.
  vector.catch(() => undefined);
  return { adapters, weight, vector };
}

async function vectorIds(
  db: D1Database,
  semantic: Semantic,
  auth: AuthContext,
  p: SearchParams,
  scope: RecordScope,
  topK: number,
  timeoutMs: number,
  tm: Record<string, number> | undefined,
): Promise<VectorMatch[] | null> {
  const { adapters } = semantic;
  const work = (async () => {
    const hidden = scope.projectIds ? undefined : await timed(tm, 'hidden', hiddenProjectIds(db, auth));
    // The index gets the vector still on its way: the local one reads its candidates from D1 meanwhile.
    const vector = semantic.vector.then((v) => v ?? []);
    const matches = await timed(tm, 'vector_index', adapters.index.query(vector, {
      teamId: auth.teamId,
      projectIds: scope.projectIds ?? undefined,
      excludeProjectIds: hidden,
      types: p.type.length ? p.type : undefined,
      topK,
      timings: tm,
    }));
    if ((await vector).length === 0) return [];
    return matches.filter((m) => m.score >= adapters.embedder.minScore);
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
  scope: RecordScope;
  /** Ids in rank order; all pass the scope (hybrid lists are checked while ranking). */
  items: { id: number; score: number }[];
  total: number;
  mode: 'hybrid' | 'fts';
  /** Rows already loaded while ranking; the rest are loaded for the page only. */
  rows: Map<number, RecordRow>;
}

interface RankInput {
  q: string;
  fts: { all: string; any: string; terms: string[] };
  /** Stored-at window around calendar days the query names (src/search/dates.ts); rows in it are lifted. */
  window: { since: number; until: number } | null;
  pool: number;
  want: number;
}

/** Summaries and prompts: FTS only (the vector index holds observations). */
async function rankText(db: D1Database, scope: RecordScope, r: RankInput, tm: Record<string, number> | undefined): Promise<Ranking> {
  const [{ rows, total }, dated] = await Promise.all([
    timed(tm, `fts_${scope.kind}`, ftsSearch(db, r.fts.all, r.fts.any, scope, r.pool)),
    timed(tm, `dated_${scope.kind}`, datedHits(db, r.fts, scope, r.window, r.pool)),
  ]);
  const items = liftDated(rows.map((x) => ({ id: x.id, score: -x.rank })), dated, (id) => ({ id, score: 0 }));
  return { scope, items, total, mode: 'fts', rows: new Map() };
}

/** Observations: FTS, files named in the query, and vector neighbours when available. */
async function rankObservations(db: D1Database, auth: AuthContext, p: SearchParams, scope: RecordScope, r: RankInput, semantic: Semantic | null, deps: SearchDeps): Promise<Ranking> {
  const tm = deps.timings;
  const { q, fts, pool, want } = r;
  const adapters = semantic?.adapters ?? null;
  const weight = semantic?.weight ?? 0;
  const paths = pathLikeTerms(q);
  const ftsPromise = timed(tm, 'fts', ftsSearch(db, fts.all, fts.any, scope, pool));
  const filesPromise = timed(tm, 'files', observationsTouching(db, paths, scope, pool));
  const vectorPromise = semantic ? vectorIds(db, semantic, auth, p, scope, Math.min(100, pool), deps.vectorTimeoutMs ?? 2000, tm) : Promise.resolve(null);
  const datedPromise = timed(tm, 'dated', datedHits(db, fts, scope, r.window, pool));
  const [{ rows: ranked, total }, files, vec, dated] = await Promise.all([ftsPromise, filesPromise, timed(tm, 'vector', vectorPromise), datedPromise]);
  // All-terms matches outrank partial ones; the OR list only fills in after them. Rows that touched a named
  // file rank with the all-terms matches (first when the query is nothing but file names).
  const onlyPaths = paths.length > 0 && fts.terms.length === paths.length;
  const fileRanked = files.map((id) => ({ id, rank: 0, exact: true }));
  const strict = ranked.filter((x) => x.full === 1).map((x) => ({ id: x.id, rank: x.rank, exact: true, score: -x.rank }));
  const loose = ranked.filter((x) => x.full !== 1).map((x) => ({ id: x.id, rank: x.rank, exact: false, score: -x.rank }));
  const ordered = onlyPaths ? [...fileRanked, ...strict, ...loose] : [...strict, ...fileRanked, ...loose];
  const seen = new Set<number>();
  const ftsList = liftDated(ordered.filter((x) => !seen.has(x.id) && !!seen.add(x.id)), dated, (id) => ({ id, rank: 0, exact: false }));
  const fileOnly = files.filter((id) => !ranked.some((x) => x.id === id)).length;

  if (vec === null) {
    return { scope, items: ftsList.map((x) => ({ id: x.id, score: -x.rank })), total: total + fileOnly, mode: 'fts', rows: new Map() };
  }
  const fused =
    adapters && fusionMethodFor(adapters.embedder.name) === 'score'
      ? scoreFusion(ftsList, vec, { vectorWeight: weight, floor: adapters.embedder.minScore })
      : weightedFusion(ftsList, vec.map((m) => m.id), { vectorWeight: weight });
  // FTS ids are already scoped; only vector ids can drop out, so want + |vec| candidates always fill the page.
  const vecIds = vec.map((m) => m.id);
  const rows = await timed(tm, 'hydrate', recordRows(db, [...new Set([...fused.slice(0, want + vec.length).map((f) => f.id), ...vecIds])], scope));
  const allowed = fused.filter((f) => rows.has(f.id));
  const ftsSet = new Set(ftsList.map((x) => x.id));
  const vectorOnly = allowed.filter((f) => !ftsSet.has(f.id)).length;
  return { scope, items: allowed, total: total + fileOnly + vectorOnly, mode: 'hybrid', rows };
}

interface Pick {
  ranking: Ranking;
  id: number;
  score: number;
}

/**
 * Cuts the page: one kind's list as it is, several kinds fused by RRF over their ranked lists, then the head
 * of the list thinned of near-duplicates (src/search/diversify.ts). Rows not yet loaded are loaded per kind
 * (scope re-applied): the diversified head and the page, so every page sees the same order.
 */
async function pageOf(db: D1Database, rankings: Ranking[], offset: number, want: number, tm: Record<string, number> | undefined): Promise<SearchResult[]> {
  const merged: Pick[] =
    rankings.length === 1
      ? rankings[0]!.items.slice(0, Math.max(want, DIVERSIFY.window)).map((it) => ({ ranking: rankings[0]!, ...it }))
      : reciprocalRankFusion(rankings.map((rk, i) => rk.items.map((it) => `${i}:${it.id}`)))
          .slice(0, Math.max(want, DIVERSIFY.window))
          .map((f) => {
            const [i, id] = f.id.split(':').map(Number) as [number, number];
            return { ranking: rankings[i]!, id, score: f.score };
          });
  const needed = [...merged.slice(0, DIVERSIFY.window), ...merged.slice(Math.max(offset, DIVERSIFY.window), want)];
  await timed(tm, 'hydrate_page', Promise.all(
    rankings.map(async (rk) => {
      const missing = needed.filter((x) => x.ranking === rk && !rk.rows.has(x.id)).map((x) => x.id);
      for (const [id, row] of await recordRows(db, missing, rk.scope)) rk.rows.set(id, row);
    }),
  ));
  const ordered = diversify(merged, (x) => x.ranking.rows.get(x.id)?.title ?? '');
  const page = ordered.slice(offset, want).flatMap((x) => {
    const row = x.ranking.rows.get(x.id);
    return row ? [toResult(x.ranking.scope.kind, row, x.score)] : [];
  });
  // A deferred near-duplicate keeps its own score only where that does not rise above the row before it.
  for (let i = 1; i < page.length; i++) page[i]!.score = Math.min(page[i]!.score, page[i - 1]!.score);
  return page;
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
  // The team's database (its shard, src/db/shards.ts): every statement of this search goes there.
  const db = await teamDb(env, auth.teamId);
  if (!p.q) {
    const scopes = await timed(tm, 'scope', scopesFor(db, auth, p));
    return scopes.length === 0 ? { results: [], total: 0, mode: 'fts' } : filterOnly(db, p, scopes);
  }
  // Digit-only dates leave the words; when nothing else is left, the query is searched as typed.
  const named = namedDays(p.q, deps.now ?? Date.now());
  const window = dayWindow(named.days);
  const stripped = named.days.length ? buildFtsQuery(named.rest) : null;
  // "What did we do yesterday?": nothing left to match but the day, so that day's records, newest first.
  const dayOnly = !!window && !!stripped && (!stripped.all || stripped.fillerOnly);
  const fts: FtsQuery = stripped?.all ? stripped : buildFtsQuery(p.q);
  // Text with nothing searchable in it (punctuation, emoji) matches nothing, whatever the filters say.
  const terms = fts.all && fts.any ? { all: fts.all, any: fts.any, terms: fts.terms } : null;
  if (!dayOnly && !terms) return { results: [], total: 0, mode: 'fts' };
  // Embedding the query is the slowest part of a hybrid search: it starts before the scope's reads.
  const semantic = dayOnly ? null : startSemantic(env, p, p.q, deps);
  const scopes = await timed(tm, 'scope', scopesFor(db, auth, p));
  if (scopes.length === 0) return { results: [], total: 0, mode: 'fts' };
  if (window && dayOnly) return filterOnly(db, p, scopes.map((s) => storedWithin(s, window.since, window.until)));
  if (!terms) return { results: [], total: 0, mode: 'fts' }; // not reached (checked above); narrows the type

  const want = p.offset + p.limit;
  const r: RankInput = { q: p.q, fts: terms, window: stripped?.all ? window : null, pool: Math.min(1000, Math.max(want, 60)), want };
  // Summary and prompt statements go out first; the observation side then adds its own beside the embedding.
  const text = scopes.filter((s) => s.kind !== 'observation').map((s) => rankText(db, s, r, tm));
  const obs = scopes.filter((s) => s.kind === 'observation').map((s) => rankObservations(db, auth, p, s, r, semantic, deps));
  const byKind = await Promise.all([...obs, ...text]);
  const results = await pageOf(db, byKind, p.offset, want, tm);
  return { results, total: byKind.reduce((n, k) => n + k.total, 0), mode: byKind.some((k) => k.mode === 'hybrid') ? 'hybrid' : 'fts' };
}
