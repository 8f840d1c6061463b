// searchObservations: FTS5 (AND first, OR to fill) over observations, summaries and prompts, each kind fused with its own vector neighbours (src/search/config.ts), scoped to what the caller may read.
import type { AuthContext } from '../auth/types';
import { resolveVisibleProjects } from '../db/projects';
import {
  ftsRanked,
  newestRecords,
  observationsTouching,
  recordRows,
  recordScope,
  storedWithin,
  type FtsRanked,
  type RecordRow,
  type RecordScope,
} from '../db/fts';
import { loadViewer } from '../db/visibility';
import type { CairnEnv } from '../env';
import { AppError } from '../lib/errors';
import { parseWith } from '../lib/validate';
import type { VectorAdapters } from '../vectors/types';
import { fuseWithVectors, timed, vectorIds, vectorSide, type VectorSide } from './vector-side';
import {
  BM25_WEIGHTS,
  buildFtsQuery,
  pathLikeTerms,
  PROMPT_BM25_WEIGHTS,
  scopeMatch,
  SUMMARY_BM25_WEIGHTS,
  type FtsQuery,
} from './fts-query';
import { appliesTo, hasFilter, kindsOf, SearchParams, type RecordKind, type SearchInput } from './params';
import { DIVERSIFY, diversify } from './diversify';
import { dayWindow, liftDated, namedDays } from './dates';
import { reciprocalRankFusion } from './rrf';
import { directoryDb, teamDb } from '../db/shards';
import { settingsFor } from '../db/team-settings';
import { fadeCutoff } from '../db/fading';
import { signalsOf, type RecordSignal } from '../db/corrections';
import { applyCorrections } from './corrections-rank';
import { judgeStored } from '../evidence/checkout';
import type { Judgement } from '#shared/evidence';

/** One result: the record's row (db/fts.ts) and its score. */
export interface SearchResult extends RecordRow {
  /** Which table `id` belongs to; text output writes `#12`, `S12` (summary) or `P12` (prompt). */
  kind: RecordKind;
  /** Higher is better; comparable only within one response. */
  score: number;
  /** Flagged wrong or outdated and not yet reviewed (observations). */
  flagged?: boolean;
  /** Written into the repository's instruction file (`cairn promote`): out of the context index, still found here. */
  promoted?: boolean;
  /** Observations none of the team used within fade_after_days (src/db/fading.ts): out of the context index. */
  faded?: boolean;
  /**
   * Observations: its evidence against the caller's last reported checkout of its project (src/shared/evidence.ts);
   * a `gone` one ranks after every other.
   */
  evidence?: Judgement;
}

/** Judges observation ids for the caller (src/evidence/checkout.ts judgeStored). */
type Judge = (ids: number[]) => Promise<ReadonlyMap<number, Judgement>>;

/** How far down the list records are judged: gone ones there go after the rest of it (a page's worth and more). */
const JUDGED_HEAD = 200;

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
async function ftsSearch(
  db: D1Database,
  allTerms: string,
  anyTerms: string,
  scope: RecordScope,
  pool: number,
): Promise<{ rows: FtsRanked[]; total: number }> {
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
async function datedHits(
  db: D1Database,
  fts: RankInput['fts'],
  scope: RecordScope,
  window: RankInput['window'],
  pool: number,
): Promise<number[]> {
  if (!window) return [];
  const { weights, scoped } = RANKING[scope.kind];
  const narrow = (expr: string) => (scoped ? scopeMatch(expr, scope.projectIds) : expr);
  const { rows } = await ftsRanked(
    db,
    storedWithin(scope, window.since, window.until),
    { all: narrow(fts.all), any: narrow(fts.any) },
    weights,
    pool,
  );
  return rows.map((x) => x.id);
}

const toResult = (kind: RecordKind, r: RecordRow, score: number): SearchResult => ({
  kind,
  ...r,
  score: Math.round(score * 1e5) / 1e5,
});

/** A listing's observations with their evidence, gone ones after the rest of the page. */
async function judged(listing: Promise<SearchResponse>, judge: Judge): Promise<SearchResponse> {
  const res = await listing;
  const evidence = await judge(res.results.filter((r) => r.kind === 'observation').map((r) => r.id));
  if (!evidence.size) return res;
  const results = res.results.map((r) => {
    const ev = r.kind === 'observation' ? evidence.get(r.id) : undefined;
    return ev ? { ...r, evidence: ev } : r;
  });
  const gone = (r: SearchResult) => r.evidence?.value === 'gone';
  return { ...res, results: [...results.filter((r) => !gone(r)), ...results.filter(gone)] };
}

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
  return {
    results: merged.slice(p.offset, p.offset + p.limit),
    total: lists.reduce((n, l) => n + l.total, 0),
    mode: 'fts',
  };
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
  /** Corrections and feedback of the ranked observations that have any. */
  signals?: Map<number, RecordSignal>;
}

interface RankInput {
  q: string;
  fts: { all: string; any: string; terms: string[] };
  /** Stored-at window around calendar days the query names (src/search/dates.ts); rows in it are lifted. */
  window: { since: number; until: number } | null;
  pool: number;
  want: number;
}

/** Summaries and prompts: FTS, and their own vector neighbours when the vector side is on (fused as observations are). */
async function rankText(
  db: D1Database,
  auth: AuthContext,
  p: SearchParams,
  scope: RecordScope,
  r: RankInput,
  side: VectorSide | null,
  deps: SearchDeps,
): Promise<Ranking> {
  const tm = deps.timings;
  const k = scope.kind;
  const ftsPromise = timed(tm, `fts_${k}`, ftsSearch(db, r.fts.all, r.fts.any, scope, r.pool));
  const datedPromise = timed(tm, `dated_${k}`, datedHits(db, r.fts, scope, r.window, r.pool));
  const vectorPromise = side
    ? timed(tm, `vector_${k}`, vectorIds(side, auth, p, scope, Math.min(100, r.pool), deps.vectorTimeoutMs ?? 2000))
    : Promise.resolve(null);
  const [{ rows, total }, dated, vec] = await Promise.all([ftsPromise, datedPromise, vectorPromise]);
  if (vec === null || !side) {
    const items = liftDated(
      rows.map((x) => ({ id: x.id, score: -x.rank })),
      dated,
      (id) => ({ id, score: 0 }),
    );
    return { scope, items, total, mode: 'fts', rows: new Map() };
  }
  const ftsList = liftDated(
    rows.map((x) => ({ id: x.id, rank: x.rank, exact: x.full === 1, score: -x.rank })),
    dated,
    (id) => ({ id, rank: 0, exact: false }),
  );
  const fused = await fuseWithVectors(db, scope, ftsList, vec, side, r.want, tm, `hydrate_${k}`);
  return { scope, items: fused.items, total: total + fused.vectorOnly, mode: 'hybrid', rows: fused.rows };
}

/**
 * Observations ranked, then corrected: superseded records below every current one, useful ones lifted a little
 * (src/search/corrections-rank.ts). One more statement, for the ranked ids that have corrections or feedback.
 */
async function rankObservations(
  db: D1Database,
  auth: AuthContext,
  p: SearchParams,
  scope: RecordScope,
  r: RankInput,
  side: VectorSide | null,
  deps: SearchDeps,
): Promise<Ranking> {
  const ranking = await rankObservationsByRelevance(db, auth, p, scope, r, side, deps);
  if (!ranking.items.length) return ranking;
  const signals = await timed(
    deps.timings,
    'signals',
    signalsOf(
      db,
      auth.teamId,
      ranking.items.map((x) => x.id),
    ),
  );
  return { ...ranking, items: applyCorrections(ranking.items, signals), signals };
}

/** Observations: FTS, files named in the query, and vector neighbours when available. */
async function rankObservationsByRelevance(
  db: D1Database,
  auth: AuthContext,
  p: SearchParams,
  scope: RecordScope,
  r: RankInput,
  side: VectorSide | null,
  deps: SearchDeps,
): Promise<Ranking> {
  const tm = deps.timings;
  const { q, fts, pool, want } = r;
  const paths = pathLikeTerms(q);
  // The query's embedding is already on its way (searchObservations asked for it before the scope's reads).
  const ftsPromise = timed(tm, 'fts', ftsSearch(db, fts.all, fts.any, scope, pool));
  const filesPromise = timed(tm, 'files', observationsTouching(db, paths, scope, pool));
  const vectorPromise = side
    ? vectorIds(side, auth, p, scope, Math.min(100, pool), deps.vectorTimeoutMs ?? 2000, tm)
    : Promise.resolve(null);
  const datedPromise = timed(tm, 'dated', datedHits(db, fts, scope, r.window, pool));
  const [{ rows: ranked, total }, files, vec, dated] = await Promise.all([
    ftsPromise,
    filesPromise,
    timed(tm, 'vector', vectorPromise),
    datedPromise,
  ]);
  // All-terms matches outrank partial ones; the OR list only fills in after them. Rows that touched a named
  // file rank with the all-terms matches (first when the query is nothing but file names).
  const onlyPaths = paths.length > 0 && fts.terms.length === paths.length;
  const fileRanked = files.map((id) => ({ id, rank: 0, exact: true }));
  const strict = ranked
    .filter((x) => x.full === 1)
    .map((x) => ({ id: x.id, rank: x.rank, exact: true, score: -x.rank }));
  const loose = ranked
    .filter((x) => x.full !== 1)
    .map((x) => ({ id: x.id, rank: x.rank, exact: false, score: -x.rank }));
  const ordered = onlyPaths ? [...fileRanked, ...strict, ...loose] : [...strict, ...fileRanked, ...loose];
  const seen = new Set<number>();
  const ftsList = liftDated(
    ordered.filter((x) => !seen.has(x.id) && !!seen.add(x.id)),
    dated,
    (id) => ({ id, rank: 0, exact: false }),
  );
  const fileOnly = files.filter((id) => !ranked.some((x) => x.id === id)).length;

  if (vec === null || !side) {
    return {
      scope,
      items: ftsList.map((x) => ({ id: x.id, score: -x.rank })),
      total: total + fileOnly,
      mode: 'fts',
      rows: new Map(),
    };
  }
  const fused = await fuseWithVectors(db, scope, ftsList, vec, side, want, tm, 'hydrate');
  return { scope, items: fused.items, total: total + fileOnly + fused.vectorOnly, mode: 'hybrid', rows: fused.rows };
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
async function pageOf(
  db: D1Database,
  rankings: Ranking[],
  offset: number,
  want: number,
  tm: Record<string, number> | undefined,
  judge: Judge,
): Promise<SearchResult[]> {
  const fused: Pick[] =
    rankings.length === 1
      ? rankings[0]!.items.map((it) => ({ ranking: rankings[0]!, ...it }))
      : reciprocalRankFusion(rankings.map((rk, i) => rk.items.map((it) => `${i}:${it.id}`))).map((f) => {
          const [i, id] = f.id.split(':').map(Number) as [number, number];
          return { ranking: rankings[i]!, id, score: f.score };
        });
  const head = fused.slice(0, Math.max(JUDGED_HEAD, want));
  const isObs = (x: Pick) => x.ranking.scope.kind === 'observation';
  const evidence = await timed(tm, 'evidence', judge(head.filter(isObs).map((x) => x.id)));
  const gone = (x: Pick) => isObs(x) && evidence.get(x.id)?.value === 'gone';
  // Records whose every cited file is gone from the caller's checkout go after the rest (kept: search finds them).
  const merged = [...head.filter((x) => !gone(x)), ...head.filter(gone)].slice(0, Math.max(want, DIVERSIFY.window));
  const needed = [...merged.slice(0, DIVERSIFY.window), ...merged.slice(Math.max(offset, DIVERSIFY.window), want)];
  await timed(
    tm,
    'hydrate_page',
    Promise.all(
      rankings.map(async (rk) => {
        const missing = needed.filter((x) => x.ranking === rk && !rk.rows.has(x.id)).map((x) => x.id);
        for (const [id, row] of await recordRows(db, missing, rk.scope)) rk.rows.set(id, row);
      }),
    ),
  );
  const ordered = diversify(merged, (x) => x.ranking.rows.get(x.id)?.title ?? '');
  const page = ordered.slice(offset, want).flatMap((x) => {
    const row = x.ranking.rows.get(x.id);
    const review = x.ranking.signals?.get(x.id)?.review;
    const mark = review === 'pending' ? { flagged: true } : review === 'promoted' ? { promoted: true } : {};
    const ev = isObs(x) ? evidence.get(x.id) : undefined;
    return row
      ? [
          {
            ...toResult(x.ranking.scope.kind, row, x.score),
            ...mark,
            ...(ev ? { evidence: ev } : {}),
          },
        ]
      : [];
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
export async function searchObservations(
  env: CairnEnv,
  auth: AuthContext,
  input: SearchInput,
  deps: SearchDeps = {},
): Promise<SearchResponse> {
  const res = await searchRanked(env, auth, input, deps);
  // Faded records are found all the same, and say so (their clock comes with the row: db/fts.ts liveAt). The
  // team's setting is read (normally with the token, no statement) only when a result is old enough to have faded.
  const now = deps.now ?? Date.now();
  if (!res.results.some((r) => r.liveAt != null && r.liveAt < fadeCutoff({ fade_after_days: 1 }, now))) return res;
  const cutoff = fadeCutoff(await settingsFor(directoryDb(env), auth), now);
  const faded = (r: SearchResult) => r.kind === 'observation' && r.liveAt != null && r.liveAt < cutoff;
  if (!res.results.some(faded)) return res;
  return { ...res, results: res.results.map((r) => (faded(r) ? { ...r, faded: true } : r)) };
}

async function searchRanked(
  env: CairnEnv,
  auth: AuthContext,
  input: SearchInput,
  deps: SearchDeps,
): Promise<SearchResponse> {
  const p = parseWith(SearchParams, input);
  if (!p.q && !hasFilter(p)) throw new AppError(400, 'query_required', 'Give a query (q) or at least one filter.');
  const tm = deps.timings;
  // The team's database (its shard, src/db/shards.ts): every statement of this search goes there.
  const db = await teamDb(env, auth.teamId);
  const judge: Judge = (ids) => judgeStored(db, auth, ids);
  if (!p.q) {
    const scopes = await timed(tm, 'scope', scopesFor(db, auth, p));
    return scopes.length === 0 ? { results: [], total: 0, mode: 'fts' } : judged(filterOnly(db, p, scopes), judge);
  }
  // Digit-only dates leave the words; when nothing else is left, the query is searched as typed.
  const named = namedDays(p.q, deps.now ?? Date.now());
  const window = dayWindow(named.days);
  const stripped = named.days.length ? buildFtsQuery(named.rest) : null;
  // "What did we do yesterday?": nothing left to match but the day, so that day's records, newest first.
  const dayOnly = !!window && !!stripped && (!stripped.all || stripped.fillerOnly);
  const fts: FtsQuery = stripped?.all ? stripped : buildFtsQuery(p.q);
  const terms = fts.all && fts.any ? { all: fts.all, any: fts.any, terms: fts.terms } : null;
  // Text with nothing searchable in it (punctuation, emoji) matches nothing, whatever the filters say.
  if (!dayOnly && !terms) return { results: [], total: 0, mode: 'fts' };
  // Embedding the query is the slowest part of a hybrid search: it is asked for before the scope's reads.
  const side = dayOnly ? null : vectorSide(env, db, auth, p, deps.vectors, tm);
  const scopes = await timed(tm, 'scope', scopesFor(db, auth, p));
  if (scopes.length === 0) return { results: [], total: 0, mode: 'fts' };
  if (window && dayOnly)
    return judged(
      filterOnly(
        db,
        p,
        scopes.map((s) => storedWithin(s, window.since, window.until)),
      ),
      judge,
    );
  if (!terms) return { results: [], total: 0, mode: 'fts' }; // not reached (checked above); narrows the type

  const want = p.offset + p.limit;
  const r: RankInput = {
    q: p.q,
    fts: terms,
    window: stripped?.all ? window : null,
    pool: Math.min(1000, Math.max(want, 60)),
    want,
  };
  // Summary and prompt statements go out first; every kind's vector side shares the one query embedding.
  const text = scopes.filter((s) => s.kind !== 'observation').map((s) => rankText(db, auth, p, s, r, side, deps));
  const obs = scopes
    .filter((s) => s.kind === 'observation')
    .map((s) => rankObservations(db, auth, p, s, r, side, deps));
  const byKind = await Promise.all([...obs, ...text]);
  const results = await pageOf(db, byKind, p.offset, want, tm, judge);
  return {
    results,
    total: byKind.reduce((n, k) => n + k.total, 0),
    mode: byKind.some((k) => k.mode === 'hybrid') ? 'hybrid' : 'fts',
  };
}
