// Search API: GET /api/search (observations, summaries, prompts; hybrid FTS5 + vectors) and the admin vector backfill.
import { Hono } from 'hono';
import type { AppEnv } from '../auth/types';
import { AppError } from '../lib/errors';
import { query } from '../lib/validate';
import { getVectorAdapters } from '../vectors/adapters';
import { backfillVectors } from '../vectors/embed-job';
import * as z from 'zod';
import type { SearchKind } from './params';
import { renderSearchText } from './render';
import { searchObservations } from './search';
import { errorText, log } from '../lib/log';
import { wireEvidence } from '../evidence/checkout';

/** Mounted at /api/search (scope `read`). */
export const searchRoutes = new Hono<AppEnv>();
/** Mounted at /api/admin/backfill-vectors, under the admin guard. */
export const backfillRoutes = new Hono<AppEnv>();

searchRoutes.get('/', async (c) => {
  const url = new URL(c.req.url);
  const one = (k: string) => url.searchParams.get(k) ?? undefined;
  const many = (k: string) => url.searchParams.getAll(k);
  const timings: Record<string, number> = {};
  const res = await searchObservations(
    c.env,
    c.get('auth'),
    {
      q: one('q'),
      project: many('project'),
      type: many('type'),
      concept: many('concept'),
      file: many('file'),
      author: many('author'),
      platform: many('platform'),
      since: one('since'),
      until: one('until'),
      limit: one('limit'),
      offset: one('offset'),
      mode: one('mode') as 'hybrid' | 'fts' | undefined,
      kind: one('kind') as SearchKind | undefined,
    },
    { timings },
  );
  // Callers that do not ask for a kind get exactly the observation-only response they always got.
  const withKind = url.searchParams.has('kind');
  c.header(
    'server-timing',
    Object.entries(timings)
      .map(([k, v]) => `${k};dur=${v}`)
      .join(', '),
  );
  if (one('format') === 'text') {
    return c.text(renderSearchText(res, Number(one('offset') ?? 0) || 0));
  }
  return c.json({
    results: res.results.map((r) => ({
      ...(withKind ? { kind: r.kind } : {}),
      id: r.id,
      time: new Date(r.createdAt).toISOString(),
      type: r.type,
      title: r.title,
      project: r.projectKey,
      author: r.author,
      tokens: r.tokens,
      score: r.score,
      // Present only on corrected, flagged or promoted records, so answers about current ones keep their shape.
      ...(r.supersededBy != null ? { superseded_by: r.supersededBy } : {}),
      ...(r.flagged ? { flagged: true } : {}),
      ...(r.promoted ? { promoted: true } : {}),
      // Nobody used it within the team's fade_after_days: out of the context index, found here all the same.
      ...(r.faded ? { faded: true } : {}),
      // Observations: how their evidence stands in the caller's checkout (src/shared/evidence.ts).
      ...(r.kind === 'observation' ? { evidence: wireEvidence(r.evidence) } : {}),
    })),
    total: res.total,
    mode: res.mode,
  });
});

const BackfillQuery = z.object({ limit: z.coerce.number().int().min(1).max(1000).default(200) });
export type BackfillQuery = z.infer<typeof BackfillQuery>;

/**
 * Embeds some of the caller's team's records that have no vector yet now: one embed step (at most `limit`
 * records, within a job step's budget). The server does all of it by itself (the `embed` job); this is for a
 * caller that wants vectors before it goes on (benchmarks, tests).
 */
backfillRoutes.post('/', query(BackfillQuery, { blankIsAbsent: true }), async (c) => {
  const { limit } = c.req.valid('query');
  const adapters = getVectorAdapters(c.env);
  if (!adapters) throw new AppError(503, 'vectors_unavailable', 'No vector index is configured for this deployment.');
  let out: Awaited<ReturnType<typeof backfillVectors>>;
  try {
    out = await backfillVectors(c.env, c.get('auth').teamId, limit);
  } catch (err) {
    log('error', 'embedding failed', { message: errorText(err) });
    throw new AppError(503, 'embedding_failed', 'Embedding failed; nothing more was indexed. Try again later.');
  }
  return c.json({ indexed: out.indexed, remaining: out.remaining, index: adapters.index.name });
});
