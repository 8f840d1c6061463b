// The `embed` job: gives a team's records their vectors in bounded steps. `missing` (the default) embeds the
// records that have none (after a failed turn indexing, an import, a move, an upgrade that added vector parts:
// the server starts it by itself, src/jobs/ticks); `all` embeds every live record again (after the embedder
// changed). A unit of work is one chunk of at most EMBED_CHUNK_TEXTS texts: embedded, upserted and marked
// embedded before the next is asked for, so a step never holds more than one chunk of vectors. Repeating a
// step is harmless: upserts replace vectors by id and `embedded_at` is only ever set.
import * as z from 'zod';
import { countUnembedded, countLive, liveIdsAfter, localUpsertStatements, unembeddedIds } from '../db/vectors';
import { teamDb } from '../db/shards';
import { configOf } from '../config';
import type { CairnEnv } from '../env';
import { startJob } from '../jobs/start';
import { stepContext } from '../jobs/step';
import type { JobProgress } from '#shared/jobs';
import { JobFailure, type JobKind } from '../jobs/types';
import { getVectorAdapters } from './adapters';
import { chunkRecords, dropGone, EMBED_CHUNK_TEXTS, embedChunk, loadRecords, type RecordIds } from './index-records';
import { VECTOR_KINDS } from './keys';
import type { VectorKind } from './types';

const EmbedParams = z
  .object({
    mode: z.enum(['missing', 'all']).default('missing'),
    /** Stop after this many records (the bounded admin route); absent: until none is left. */
    maxRecords: z.number().int().min(1).max(100_000).optional(),
  })
  .strict();
type EmbedParams = z.infer<typeof EmbedParams>;

interface EmbedCursor {
  /** Index into VECTOR_KINDS: observations, then summaries, then prompts. */
  k: number;
  /** `all`: the last record id done of the current kind. */
  after: number;
  done: number;
  total: number | null;
}

/** Records read per look-up (their texts, not vectors: small). */
const LOAD = 100;
const FIELD: Record<VectorKind, keyof RecordIds> = {
  observation: 'observations',
  summary: 'summaries',
  prompt: 'prompts',
};

const progress = (c: EmbedCursor): JobProgress => ({
  done: c.done,
  total: c.total,
  unit: 'records',
  phase: VECTOR_KINDS[c.k] ? `embedding ${FIELD[VECTOR_KINDS[c.k]!]}` : 'done',
});

export const embedJob: JobKind<EmbedParams, EmbedCursor> = {
  name: 'embed',
  lane: 'team',
  params: EmbedParams,
  adminStartable: true,
  dedupe: (p) => `embed:${p.mode}`,
  init: () => {
    const cursor = { k: 0, after: 0, done: 0, total: null };
    return { cursor, progress: progress(cursor) };
  },
  async step(ctx, params, start) {
    if (ctx.teamId === null) throw new JobFailure('team_required', 'An embed job runs for one team.');
    const teamId = ctx.teamId;
    const adapters = getVectorAdapters(ctx.env);
    const c = { ...start };
    if (!adapters)
      return {
        cursor: c,
        done: true,
        progress: progress({ ...c, k: VECTOR_KINDS.length }),
        result: { skipped: 'no vector index is configured' },
      };
    const d = await teamDb(ctx.env, teamId);
    if (c.total === null) {
      let total = 0;
      for (const kind of VECTOR_KINDS)
        total += params.mode === 'missing' ? await countUnembedded(d, teamId, kind) : await countLive(d, teamId, kind);
      c.total = total;
    }
    // A chunk: its upsert (local index: 14 vectors a statement), marking it, dropping deleted records' vectors,
    // and the two look-ups before it. Vectorize and the embedder are a subrequest each.
    const unit = {
      statements: localUpsertStatements(EMBED_CHUNK_TEXTS) + 6,
      subrequests: 3,
      bytes: EMBED_CHUNK_TEXTS * adapters.embedder.dimensions * 8,
    };
    for (;;) {
      const kind = VECTOR_KINDS[c.k];
      if (kind === undefined || (params.maxRecords !== undefined && c.done >= params.maxRecords)) {
        return { cursor: c, done: true, progress: progress(c), result: { embedded: c.done, mode: params.mode } };
      }
      if (!ctx.fits(unit)) break;
      const want = Math.min(LOAD, (params.maxRecords ?? Number.MAX_SAFE_INTEGER) - c.done);
      const ids =
        params.mode === 'missing'
          ? await unembeddedIds(d, teamId, kind, want)
          : await liveIdsAfter(d, teamId, kind, c.after, want);
      if (ids.length === 0) {
        c.k++;
        c.after = 0;
        continue;
      }
      const loaded = await loadRecords(d, teamId, { [FIELD[kind]]: ids });
      await dropGone(adapters, teamId, loaded.gone);
      const records = loaded.records.sort((a, b) => a.id - b.id);
      let first = true;
      for (const chunk of chunkRecords(records, EMBED_CHUNK_TEXTS)) {
        if (!first && !ctx.fits(unit)) break;
        first = false;
        ctx.holding(await embedChunk(adapters, d, teamId, chunk, ctx.now));
        c.done += chunk.length;
        c.after = chunk[chunk.length - 1]!.id;
        await ctx.breathe();
      }
      // `all`: records the look-up found deleted are passed over with the chunk that follows them.
      if (params.mode === 'all' && records.length === 0) c.after = ids[ids.length - 1]!;
    }
    return { cursor: c, done: false, progress: progress(c) };
  },
};

export interface BackfillOutcome {
  indexed: number;
  remaining: number;
}

/**
 * One embed step run in the caller's invocation (the admin route, tests): at most `limit` records, within a
 * step's budget. The job does the same by itself; this is for a caller that wants some vectors now.
 */
export async function backfillVectors(env: CairnEnv, teamId: number, limit: number): Promise<BackfillOutcome> {
  const budget = configOf(env).jobStep;
  // Inside a request: no pauses (the caller waits for its answer).
  const ctx = stepContext({ env, jobId: 'request', teamId, actorUserId: null, budget, paceMaxMs: 0 });
  const params = EmbedParams.parse({ maxRecords: limit });
  const out = await embedJob.step(ctx, params, embedJob.init(params, { teamId, now: ctx.now }).cursor);
  const d = await teamDb(env, teamId);
  let remaining = 0;
  for (const kind of VECTOR_KINDS) remaining += await countUnembedded(d, teamId, kind);
  return { indexed: out.cursor.done, remaining };
}

/**
 * Queues the team's embed job for its missing vectors (or answers the one already queued) on the server's own
 * behalf: after a restore, and when an upgrade or the daily check finds records without vectors. Its id.
 */
export async function startEmbedJob(env: CairnEnv, teamId: number): Promise<string> {
  return (await startJob(env, embedJob, teamId, { mode: 'missing' })).id;
}
