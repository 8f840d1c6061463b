// The `fts-upkeep` job: keeps a shard's full-text indexes small and true in bounded steps, never with one
// whole-index command. Forget, the retention sweep and the team move delete rows (their triggers leave delete
// markers beside the old terms in the index's segments) and then ask for a cycle; the daily cron asks for one
// with `check` (an index out of step with its table, after a restore, is refilled first).
//
// A cycle: (check) indexes whose row count differs from their table's are refilled a window of ids at a time
// (an index holding rows its table lost is emptied first: those rows' terms cannot be deleted one by one);
// then each index gets FTS5 'merge' commands of MERGE_PAGES pages, which put every segment on one level and
// merge them incrementally, until a merge finds nothing to do: the index is one segment and every deleted
// row's terms are gone from it. That is the forget promise's bound (docs/contracts.md): the row and every
// table at once, the index segments within one cycle. Each merge or refill window is one statement of bounded
// size, so a step is a handful of them within the step's budget; repeating one is harmless.
import * as z from 'zod';
import {
  ALL_FTS,
  ftsClear,
  ftsHasStrays,
  ftsMerge,
  ftsOutOfStep,
  ftsPages,
  ftsRefill,
  ftsSegments,
  type FtsTable,
} from '../db/fts';
import { boundShards, shardDb, shardOf } from '../db/shards';
import type { CairnEnv } from '../env';
import { startJob } from '../jobs/start';
import { JobFailure, type JobKind } from '../jobs/types';
import type { JobRecord } from '../jobs/job-do';
import type { JobProgress } from '#shared/jobs';

/** Leaf pages one merge command writes at most (~4 KB each): a statement of tens of milliseconds at any size. */
export const MERGE_PAGES = 256;
/**
 * A cycle that ended capped (writes during it kept restarting the merge: FTS5's negative-count merge puts a segment
 * written meanwhile on the merging level) asks for another this much later, so the deleted rows' terms a capped
 * cycle left in the segments go with a later one instead of waiting for the next delete or the daily cron.
 */
export const CAPPED_FOLLOW_UP_MS = 60_000;
/** Content ids one refill statement covers. */
export const REFILL_WINDOW = 1_000;

const Params = z
  .object({
    shard: z.string().regex(/^DB(?:_[1-9]\d{0,3})?$/),
    /** Compare each index with its table first and refill what a restore left out (the daily cron). */
    check: z.boolean().default(false),
  })
  .strict();
type Params = z.infer<typeof Params>;

interface Cursor {
  phase: 'check' | 'refill' | 'merge' | 'done';
  /** Indexes to refill (check), then the index being merged: positions in `refill` / ALL_FTS. */
  refill: FtsTable[];
  t: number;
  after: number;
  refilled: number;
  cleared: FtsTable[];
  merges: number;
  /** Merges this cycle may send at most: twice what the index's pages at the start need, so writes during the
   * cycle cannot keep it going for ever. Null until counted. */
  cap: number | null;
  capped: boolean;
}

const progress = (c: Cursor): JobProgress => ({
  done: c.phase === 'refill' ? c.refilled : c.merges,
  total: c.phase === 'merge' || c.phase === 'done' ? c.cap : null,
  unit: c.phase === 'refill' ? 'rows' : 'merges',
  phase:
    c.phase === 'refill'
      ? `refilling ${c.refill[c.t] ?? ''}`
      : c.phase === 'merge'
        ? `merging ${ALL_FTS[c.t] ?? ''}`
        : c.phase,
});

export const ftsUpkeepJob: JobKind<Params, Cursor> = {
  name: 'fts-upkeep',
  lane: 'system',
  params: Params,
  dedupe: (p) => `fts-upkeep:${p.shard}:${p.check ? 'check' : 'merge'}`,
  // A cycle already running may have merged an index before the delete that asks for this one: queue another.
  afterRunning: true,
  init: (p) => {
    const cursor: Cursor = {
      phase: p.check ? 'check' : 'merge',
      refill: [],
      t: 0,
      after: 0,
      refilled: 0,
      cleared: [],
      merges: 0,
      cap: null,
      capped: false,
    };
    return { cursor, progress: progress(cursor) };
  },
  async step(ctx, params, start) {
    if (!boundShards(ctx.env).includes(params.shard))
      throw new JobFailure('shard_unbound', `No database ${params.shard} is bound.`);
    const d = shardDb(ctx.env, params.shard);
    const c: Cursor = { ...start, refill: [...start.refill], cleared: [...start.cleared] };
    const one = { statements: 1 };
    while (c.phase !== 'done') {
      if (c.phase === 'check') {
        if (!ctx.fits({ statements: 1 + ALL_FTS.length * 2 })) break;
        c.refill = await ftsOutOfStep(d);
        for (const t of c.refill) {
          if (await ftsHasStrays(d, t)) {
            await ftsClear(d, t);
            c.cleared.push(t);
          }
        }
        Object.assign(c, { phase: 'refill', t: 0, after: 0 });
      } else if (c.phase === 'refill') {
        const table = c.refill[c.t];
        if (table === undefined) {
          Object.assign(c, { phase: 'merge', t: 0 });
          continue;
        }
        if (!ctx.fits({ statements: 2 })) break;
        const r = await ftsRefill(d, table, c.after, REFILL_WINDOW);
        if (r.last === null) Object.assign(c, { t: c.t + 1, after: 0 });
        else {
          c.after = r.last;
          c.refilled += r.added;
        }
      } else {
        if (c.cap === null) {
          if (!ctx.fits({ statements: ALL_FTS.length })) break;
          let pages = 0;
          for (const t of ALL_FTS) pages += await ftsPages(d, t);
          c.cap = 2 * Math.ceil(pages / MERGE_PAGES) + 2 * ALL_FTS.length;
        }
        const table = ALL_FTS[c.t];
        if (table === undefined || c.merges >= c.cap) {
          c.capped = table !== undefined;
          c.phase = 'done';
          break;
        }
        if (!ctx.fits(one)) break;
        c.merges++;
        if (!(await ftsMerge(d, table, MERGE_PAGES))) c.t++;
      }
    }
    if (c.phase !== 'done') return { cursor: c, done: false, progress: progress(c) };
    const segments: Record<string, number> = {};
    for (const t of ALL_FTS) segments[t] = await ftsSegments(d, t);
    // Queued behind this one (afterRunning) even though this cycle is still the running one.
    if (c.capped)
      await startJob(ctx.env, ftsUpkeepJob, null, { shard: params.shard, check: false }, null, {
        notBefore: ctx.now + CAPPED_FOLLOW_UP_MS,
      });
    return {
      cursor: c,
      done: true,
      progress: { ...progress(c), done: c.merges, total: c.merges },
      result: {
        shard: params.shard,
        merges: c.merges,
        capped: c.capped,
        refilled: c.refilled,
        out_of_step: c.refill,
        cleared: c.cleared,
        segments,
      },
    };
  },
};

/** Asks for an upkeep cycle of the shard holding a team (after a delete); answers the queued one, or queues one
 * behind a running cycle (which may already be past the index the delete wrote into). */
export async function requestFtsUpkeep(env: CairnEnv, teamId: number): Promise<JobRecord> {
  return startJob(env, ftsUpkeepJob, null, { shard: await shardOf(env, teamId), check: false });
}

/** The daily cron's cycle of every bound shard, with the check against the tables first. */
export async function startDailyFtsUpkeep(env: CairnEnv): Promise<string[]> {
  const ids: string[] = [];
  for (const shard of boundShards(env)) ids.push((await startJob(env, ftsUpkeepJob, null, { shard, check: true })).id);
  return ids;
}
