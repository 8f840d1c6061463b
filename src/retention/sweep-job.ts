// The `retention-sweep` job: one team's records older than its retention_days deleted in bounded steps. The
// daily cron starts one per team that set retention_days (src/retention/sweep.ts); a first sweep of a long
// history is hundreds of chunks, which one invocation cannot send (D1: 1,000 statements on Paid, 50 on Free).
// A unit looks up one chunk (≤ 500 of each kind, oldest first), deletes it with its file rows, correction rows and
// local vectors in one batch, then its Vectorize vectors. Deletes go by id, so a step run again after a restart
// deletes what is left and repeats nothing; each chunk's batch writes a mark with its counts, so the rerun also
// counts what the cut-off run deleted (src/jobs/marks.ts). The last step writes the audit row (once) and asks for an
// FTS upkeep cycle.
import * as z from 'zod';
import { writeAudit } from '../audit/audit';
import { auditDetails } from '../db/audit';
import { oldRecordIds, sweepRecords, SWEEP_CHUNK } from '../db/retention';
import { earlierChunks, markTarget } from '../jobs/marks';
import { jobTeamWrite } from '../slots/enter-write';
import { JobFailure, type JobKind } from '../jobs/types';
import type { JobProgress } from '#shared/jobs';
import { requestFtsUpkeep } from '../search/fts-upkeep';
import { getVectorAdapters } from '../vectors/adapters';
import { deleteRecordVectors } from '../vectors/index-records';

const DAY_MS = 86_400_000;
/** Vector delete calls a unit makes at most: 100 records a call, three kinds. */
const VECTOR_CALLS = 3 * Math.ceil(SWEEP_CHUNK / 100);
/** A unit: the look-up batch (3), the delete batch (≤ 12 with its chunk mark), and the vector deletes (D1 statements on the local index). */
const UNIT = { statements: 15 + VECTOR_CALLS, subrequests: VECTOR_CALLS };
/** Each chunk's batch writes a mark with its counts (src/jobs/marks.ts). */
const CHUNK_MARK = 'retention.sweep.chunk';

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
  /** Chunks written so far (their marks are numbered from 0) and when the job began (its marks are no older). */
  chunks?: number;
  since?: number;
}

const progress = (c: Cursor, phase: string): JobProgress => ({
  done: c.observations + c.summaries + c.prompts,
  total: null,
  unit: 'records',
  phase,
});

const add = (c: Cursor, n: Partial<Record<'observations' | 'summaries' | 'prompts' | 'restored', number>>) => {
  c.observations += n.observations ?? 0;
  c.summaries += n.summaries ?? 0;
  c.prompts += n.prompts ?? 0;
  c.restored = (c.restored ?? 0) + (n.restored ?? 0);
};
/** What the job reports: the counts, not its bookkeeping. */
const counts = (c: Cursor) => ({
  observations: c.observations,
  summaries: c.summaries,
  prompts: c.prompts,
  restored: c.restored ?? 0,
});

export const retentionSweepJob: JobKind<Params, Cursor> = {
  name: 'retention-sweep',
  lane: 'team',
  params: Params,
  // One sweep of a team at a time: tomorrow's run finds today's still going and leaves it.
  dedupe: () => 'retention-sweep',
  init: (_p, { now }) => {
    const cursor = { observations: 0, summaries: 0, prompts: 0, restored: 0, chunks: 0, since: now };
    return { cursor, progress: progress(cursor, 'deleting old records') };
  },
  async step(ctx, p, start) {
    if (ctx.teamId === null) throw new JobFailure('team_required', 'A retention sweep runs for one team.');
    const teamId = ctx.teamId;
    // A move copies rows before it deletes the old ones: a sweep meanwhile would delete a copied row on the
    // database the team is leaving only. While the team's write gate is closed, wait.
    const pass = await jobTeamWrite(ctx.env, teamId, ctx.now);
    if ('waitMs' in pass)
      return { cursor: start, done: false, progress: progress(start, 'waiting for a move'), waitMs: pass.waitMs };
    const d = pass.dbs.team;
    const adapters = getVectorAdapters(ctx.env);
    const c: Cursor = { ...start };
    // An earlier run of this step (cut off by a restart before its cursor was saved) deleted chunks this cursor
    // does not count: their marks say how much.
    if (c.chunks !== undefined) {
      const earlier = await earlierChunks(d, teamId, CHUNK_MARK, ctx.jobId, c.chunks, c.since ?? 0);
      for (const m of earlier.counts) add(c, m);
      c.chunks = earlier.next;
    }
    while (ctx.fits(UNIT)) {
      const ids = await oldRecordIds(d, teamId, p.before);
      if (ids.observations.length + ids.summaries.length + ids.prompts.length === 0) {
        // Dated by the daily run that started it (its cutoff plus the days kept), as the sweep was before it was a job;
        // written once, also when this last step runs again after a restart.
        const at = p.before + p.days * DAY_MS;
        const target = `before:${p.before}`;
        if (
          c.observations + c.summaries + c.prompts > 0 &&
          !(await auditDetails(d, teamId, 'retention.sweep', [target], at)).has(target)
        ) {
          await writeAudit(d, {
            teamId,
            actorUserId: null,
            action: 'retention.sweep',
            target,
            detail: { days: p.days, ...counts(c) },
            at,
          });
          await requestFtsUpkeep(ctx.env, teamId);
        }
        return {
          cursor: c,
          done: true,
          progress: progress(c, 'done'),
          result: { days: p.days, before: p.before, ...counts(c) },
        };
      }
      const mark = { action: CHUNK_MARK, target: markTarget(ctx.jobId, c.chunks ?? 0) };
      const gone = await sweepRecords(d, teamId, ids, p.before, ctx.now, mark);
      if (c.chunks !== undefined) c.chunks++;
      // Every vector of every kind and part: Vectorize holds copies of summaries and prompts too.
      await deleteRecordVectors(adapters, teamId, ids);
      add(c, gone);
    }
    return { cursor: c, done: false, progress: progress(c, 'deleting old records') };
  },
};
