// The `embed` job: gives a team's records their vectors in bounded steps. `missing` (the default) embeds the
// records that have none (after a failed turn indexing, an import, a move, an upgrade that added vector parts:
// the server starts it by itself, src/jobs/ticks); `all` embeds every live record again (after the embedder
// changed). A unit of work is one chunk that fits one embedding call (at most EMBED_CHUNK_TEXTS texts and the
// embedder's token bound): embedded, upserted and marked embedded before the next is asked for, so a step never
// holds more than one chunk of vectors. A chunk the embedder refuses is split until the record it refuses is alone;
// that record counts a failure and the job goes on (embed-pieces.ts), and both modes walk ids forward from a
// cursor, so a run tries each record once and a record that fails stops nothing behind it. Repeating a step is
// harmless: upserts replace vectors by id, `embedded_at` is only ever set, and a failure is counted once a run
// (the cursor passes it).
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
import { EmbedPieces } from './embed-pieces';
import { dropGone, EMBED_CHUNK_TEXTS, loadRecords, type RecordIds } from './index-records';
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
  /** The last record id worked through of the current kind. */
  after: number;
  done: number;
  total: number | null;
  /** Records the embedder refused alone this run (absent in cursors saved before it was counted). */
  failed?: number;
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
    // and the two look-ups before it. Vectorize and the embedder are a subrequest each (and a refused chunk's
    // halves are units of their own).
    const unit = {
      statements: localUpsertStatements(EMBED_CHUNK_TEXTS) + 6,
      subrequests: 3,
      bytes: EMBED_CHUNK_TEXTS * adapters.embedder.dimensions * 8,
    };
    const pieces = new EmbedPieces(ctx, adapters, d, teamId, unit);
    const result = () => ({ embedded: c.done - (c.failed ?? 0), failed: c.failed ?? 0, mode: params.mode });
    for (;;) {
      const kind = VECTOR_KINDS[c.k];
      if (kind === undefined || (params.maxRecords !== undefined && c.done >= params.maxRecords)) {
        return { cursor: c, done: true, progress: progress(c), result: result() };
      }
      if (!ctx.fits(unit)) break;
      const want = Math.min(LOAD, (params.maxRecords ?? Number.MAX_SAFE_INTEGER) - c.done);
      const ids =
        params.mode === 'missing'
          ? await unembeddedIds(d, teamId, kind, want, c.after)
          : await liveIdsAfter(d, teamId, kind, c.after, want);
      if (ids.length === 0) {
        c.k++;
        c.after = 0;
        continue;
      }
      const loaded = await loadRecords(d, teamId, { [FIELD[kind]]: ids });
      await dropGone(adapters, teamId, loaded.gone);
      const records = loaded.records.sort((a, b) => a.id - b.id);
      // The look-up above was this round's unit: its first piece runs whatever the budget says.
      const worked = await pieces.run(records, true);
      c.done += worked.embedded + worked.failed;
      c.failed = (c.failed ?? 0) + worked.failed;
      if (worked.lastId !== null) c.after = worked.lastId;
      if (worked.stopped) break;
      // Records the look-up found deleted are passed over with the ones that follow them.
      c.after = Math.max(c.after, ids[ids.length - 1]!);
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
  return { indexed: out.cursor.done - (out.cursor.failed ?? 0), remaining };
}

/**
 * Queues the team's embed job for its missing vectors (or answers the one already queued) on the server's own
 * behalf: after a restore or an import, and when an upgrade or the daily check finds records without vectors. Its
 * id. `notBefore`: its first step waits until then, and a later start with a later time moves a still-queued job
 * there (an import's parts: the vectors follow the last part instead of competing with the next one).
 */
export async function startEmbedJob(env: CairnEnv, teamId: number, notBefore?: number): Promise<string> {
  return (
    await startJob(env, embedJob, teamId, { mode: 'missing' }, null, notBefore === undefined ? {} : { notBefore })
  ).id;
}
