// The vector side of a search: the query embedded once, each kind's neighbours from the index (under the
// embedder's floor dropped, a failing or slow index answered by keywords alone) and their fusion with the kind's
// keyword list, by the method and weight src/search/config.ts gives the embedder.
import type { AuthContext } from '../auth/types';
import { recordRows, type RecordRow, type RecordScope } from '../db/fts';
import { projectsHiddenFrom } from '../db/visibility';
import type { CairnEnv } from '../env';
import { getVectorAdapters } from '../vectors/adapters';
import { embedQuery } from '../vectors/query-cache';
import type { VectorAdapters, VectorMatch } from '../vectors/types';
import { fusionMethodFor, vectorWeightFor } from './config';
import { scoreFusion, weightedFusion, type KeywordHit } from './fusion';
import type { SearchParams } from './params';
import { errorText, log } from '../lib/log';

/** Runs `work` and records its duration under `name` when timings are wanted. */
export async function timed<T>(
  timings: Record<string, number> | undefined,
  name: string,
  work: Promise<T>,
): Promise<T> {
  if (!timings) return work;
  const t = Date.now();
  try {
    return await work;
  } finally {
    timings[name] = Date.now() - t;
  }
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
 * The vector side of one search, or null when it is off (`mode=fts`, no adapters, or an embedder weighted 0, which
 * is then not asked at all). The query is embedded once for every kind searched, asked for as soon as the side is
 * made (searchObservations makes it before the search's first statement, so the model works while D1 does), through
 * the isolate's cache of query vectors (src/vectors/query-cache.ts).
 */
export interface VectorSide {
  adapters: VectorAdapters;
  weight: number;
  queryVector: () => Promise<number[] | undefined>;
  hidden: () => Promise<number[] | undefined>;
}

export function vectorSide(
  env: CairnEnv,
  db: D1Database,
  auth: AuthContext,
  p: SearchParams,
  injected: VectorAdapters | null | undefined,
  tm?: Record<string, number>,
): VectorSide | null {
  const candidate = p.mode === 'fts' ? null : injected === undefined ? getVectorAdapters(env) : injected;
  const weight = candidate ? vectorWeightFor(candidate.embedder.name, env.CAIRN_VECTOR_WEIGHT) : 0;
  if (!candidate || weight <= 0) return null;
  const vector = timed(tm, 'embed', embedQuery(candidate.embedder, p.q!));
  // Awaited by vectorIds; a search that ends before it (no scope, a failing statement) must not leave it unhandled.
  vector.catch(() => undefined);
  let hidden: Promise<number[] | undefined> | undefined;
  return {
    adapters: candidate,
    weight,
    queryVector: () => vector,
    hidden: () => (hidden ??= timed(tm, 'hidden', hiddenProjectIds(db, auth))),
  };
}

/** One kind's vector neighbours at or above the embedder's floor; null when the vector side fails or is too slow. */
export async function vectorIds(
  side: VectorSide,
  auth: AuthContext,
  p: SearchParams,
  scope: RecordScope,
  topK: number,
  timeoutMs: number,
  tm?: Record<string, number>,
): Promise<VectorMatch[] | null> {
  const work = (async () => {
    const excludeProjectIds = scope.projectIds ? undefined : await side.hidden();
    // The index gets the vector still on its way: the local one reads its candidates from D1 meanwhile.
    const vector = side.queryVector().then((v) => v ?? []);
    const observations = scope.kind === 'observation';
    const matches = await timed(
      observations ? tm : undefined,
      'vector_index',
      side.adapters.index.query(vector, {
        teamId: auth.teamId,
        kind: scope.kind,
        projectIds: scope.projectIds ?? undefined,
        excludeProjectIds,
        types: observations && p.type.length ? p.type : undefined,
        topK,
        minScore: side.adapters.embedder.minScore,
        // The observation list's phases only: one name per phase in the Server-Timing header.
        timings: observations ? tm : undefined,
      }),
    );
    if ((await vector).length === 0) return [];
    return matches.filter((m) => m.score >= side.adapters.embedder.minScore);
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs)));
  try {
    return await Promise.race([work, late]);
  } catch (err) {
    log('warn', 'vector search failed; answering from FTS alone', { message: errorText(err) });
    return null;
  } finally {
    clearTimeout(timer);
    work.catch(() => undefined);
  }
}

/** A keyword hit as fusion reads it, with its bm25 rank. */
export type RankedHit = KeywordHit & { rank: number };

/**
 * A kind's keyword list fused with its vector neighbours (the embedder's method and weight, src/search/config.ts),
 * keeping only rows the scope allows: FTS ids are already scoped, vector ids are checked as their rows load.
 */
export async function fuseWithVectors(
  db: D1Database,
  scope: RecordScope,
  ftsList: RankedHit[],
  vec: VectorMatch[],
  side: VectorSide,
  want: number,
  tm: Record<string, number> | undefined,
  timing: string,
): Promise<{ items: { id: number; score: number }[]; rows: Map<number, RecordRow>; vectorOnly: number }> {
  const { adapters, weight } = side;
  const fused =
    fusionMethodFor(adapters.embedder.name) === 'score'
      ? scoreFusion(ftsList, vec, { vectorWeight: weight, floor: adapters.embedder.minScore })
      : weightedFusion(
          ftsList,
          vec.map((m) => m.id),
          { vectorWeight: weight },
        );
  // Only vector ids can drop out, so want + |vec| candidates always fill the page.
  const vecIds = vec.map((m) => m.id);
  const rows = await timed(
    tm,
    timing,
    recordRows(db, [...new Set([...fused.slice(0, want + vec.length).map((f) => f.id), ...vecIds])], scope),
  );
  const allowed = fused.filter((f) => rows.has(f.id));
  const ftsSet = new Set(ftsList.map((x) => x.id));
  return { items: allowed, rows, vectorOnly: allowed.filter((f) => !ftsSet.has(f.id)).length };
}
