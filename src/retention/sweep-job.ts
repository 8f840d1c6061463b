// The `retention-sweep` job: one team's records older than its retention_days deleted in bounded steps. The
// daily cron starts one per team that set retention_days (src/retention/sweep.ts); a first sweep of a long
// history is hundreds of chunks, which one invocation cannot send (D1: 1,000 statements on Paid, 50 on Free).
// A unit looks up one chunk (≤ 500 of each kind, oldest first), deletes it with its file rows, correction rows and
// local vectors in one batch, then its Vectorize vectors. Deletes go by id, so a step run again after a restart
// deletes what is left and repeats nothing. The last step writes the audit row and asks for an FTS upkeep cycle.
import * as z from 'zod';
import { writeAudit } from '../audit/audit';
import { oldRecordIds, sweepRecords, SWEEP_CHUNK } from '../db/retention';
import { teamDb } from '../db/shards';
import { JobFailure, type JobKind } from '../jobs/types';
import type { JobProgress } from '#shared/jobs';
import { requestFtsUpkeep } from '../search/fts-upkeep';
import { getVectorAdapters } from '../vectors/adapters';
import { deleteRecordVectors } from '../vectors/index-records';

const DAY_MS = 86_400_000;
/** Vector delete calls a unit makes at most: 100 records a call, three kinds. */
const VECTOR_CALLS = 3 * Math.ceil(SWEEP_CHUNK / 100);
/** A unit: the look-up batch (3), the delete batch (≤ 11), and the vector deletes (D1 statements on the local index). */
const UNIT = { statements: 14 + VECTOR_CALLS, subrequests: VECTOR_CALLS };

const Params = z
  .object({
    /** Records created before this (ms epoch) go. */
    before: z.number().int().nonnegative(),
    days: z.number().int().positive(),
  })
  .strict();
type Params = z.infer<typeof Params>;

interface Cursor {
  observations: number;
  summaries: number;
  prompts: number;
  /** Merged sources within retention put back as their survivor went (absent in cursors saved before it was kept). */
  restored?: number;
}

const progress = (c: Cursor, phase: string): JobProgress => ({
  done: c.observations + c.summaries + c.prompts,
  total: null,
  unit: 'records',
  phase,
});

export const retentionSweepJob: JobKind<Params, Cursor> = {
  name: 'retention-sweep',
  lane: 'team',
  params: Params,
  // One sweep of a team at a time: tomorrow's run finds today's still going and leaves it.
  dedupe: () => 'retention-sweep',
  init: () => {
    const cursor = { observations: 0, summaries: 0, prompts: 0, restored: 0 };
    return { cursor, progress: progress(cursor, 'deleting old records') };
  },
  async step(ctx, p, start) {
    if (ctx.teamId === null) throw new JobFailure('team_required', 'A retention sweep runs for one team.');
    const teamId = ctx.teamId;
    const d = await teamDb(ctx.env, teamId);
    const adapters = getVectorAdapters(ctx.env);
    const c: Cursor = { ...start };
    while (ctx.fits(UNIT)) {
      const ids = await oldRecordIds(d, teamId, p.before);
      if (ids.observations.length + ids.summaries.length + ids.prompts.length === 0) {
        if (c.observations + c.summaries + c.prompts > 0) {
          // Dated by the daily run that started it (its cutoff plus the days kept), as the sweep was before it was a job.
          await writeAudit(d, {
            teamId,
            actorUserId: null,
            action: 'retention.sweep',
            target: `before:${p.before}`,
            detail: { days: p.days, ...c },
            at: p.before + p.days * DAY_MS,
          });
          await requestFtsUpkeep(ctx.env, teamId);
          ctx.subrequest();
        }
        return {
          cursor: c,
          done: true,
          progress: progress(c, 'done'),
          result: { days: p.days, before: p.before, ...c },
        };
      }
      const gone = await sweepRecords(d, teamId, ids, p.before, ctx.now);
      // Every vector of every kind and part: Vectorize holds copies of summaries and prompts too.
      await deleteRecordVectors(adapters, teamId, ids);
      if (adapters)
        ctx.subrequest(
          Math.ceil(ids.observations.length / 100) +
            Math.ceil(ids.summaries.length / 100) +
            Math.ceil(ids.prompts.length / 100),
        );
      c.observations += gone.observations;
      c.summaries += gone.summaries;
      c.prompts += gone.prompts;
      c.restored = (c.restored ?? 0) + gone.restored;
    }
    return { cursor: c, done: false, progress: progress(c, 'deleting old records') };
  },
};
