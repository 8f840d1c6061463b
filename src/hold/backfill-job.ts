// The `judge-held` job (team lane): rows stored before migration 0017 were never judged for instruction-like text,
// so a teammate's old injection reached everyone's context. The job reads each kind's rows with no verdict in
// pages of at most PAGE by id and marks the held ones with the write path's own rule (queries.ts). Rows stored
// since 0017 and judged clean are read again and left as they were: the rule is pure, so judging twice changes
// nothing. A step run again after a restart starts from the cursor (the last id done). Started by an admin
// (POST /api/admin/jobs) and by the upgrade to data version 2. Its holds are writes: a step waits while the team
// moves (the team's write gate), and after a move it starts over on the new database, whose rows have other ids.
import * as z from 'zod';
import type { JobProgress } from '#shared/jobs';
import { HELD_KINDS } from '../db/held';
import { judgePage } from './queries';
import { JobFailure, type JobKind, type StepContext } from '../jobs/types';
import { jobTeamWrite } from '../slots/enter-write';

/** Rows judged per read; the held ones among them are updated one statement each in one batch. */
export const PAGE = 50;

/**
 * Rows a read may judge in this step: PAGE, or as many as the step's budget has room for after the gate (the read
 * and an update for every row), so a step on Free's 40 still judges a page.
 */
function pageThatFits(ctx: StepContext): number {
  const used = ctx.used();
  const room = Math.min(ctx.budget.statements - used.statements, ctx.budget.subrequests - used.subrequests);
  return Math.min(PAGE, room - 1);
}

const Params = z.object({}).strict();
type Params = z.infer<typeof Params>;

interface Cursor {
  /** Index into HELD_KINDS. */
  k: number;
  after: number;
  judged: number;
  held: number;
  /** The database `after` is an id of (absent in a cursor saved before a move could happen under the job). */
  shard?: string;
}

const progress = (c: Cursor, phase?: string): JobProgress => ({
  done: c.judged,
  total: null,
  unit: 'records',
  phase: phase ?? `judging ${HELD_KINDS[c.k] ?? ''} rows`,
});

export const judgeHeldJob: JobKind<Params, Cursor> = {
  name: 'judge-held',
  lane: 'team',
  params: Params,
  adminStartable: true,
  dedupe: () => 'judge-held',
  init: () => {
    const cursor: Cursor = { k: 0, after: 0, judged: 0, held: 0 };
    return { cursor, progress: progress(cursor) };
  },
  async step(ctx, _p, start) {
    if (ctx.teamId === null) throw new JobFailure('team_required', 'Held rows belong to a team.');
    const pass = await jobTeamWrite(ctx.env, ctx.teamId, ctx.now);
    if ('waitMs' in pass)
      return { cursor: start, done: false, progress: progress(start, 'waiting for a move'), waitMs: pass.waitMs };
    const d = pass.dbs.team;
    // Moved since the last step: the ids are the old database's, so every kind is judged again from the start.
    const moved = start.shard !== undefined && start.shard !== pass.shard;
    const c: Cursor = moved ? { ...start, k: 0, after: 0, shard: pass.shard } : { ...start, shard: pass.shard };
    const page = Math.max(1, pageThatFits(ctx));
    while (ctx.fits({ statements: 1 + page })) {
      const kind = HELD_KINDS[c.k];
      if (kind === undefined)
        return { cursor: c, done: true, progress: progress(c, 'done'), result: { judged: c.judged, held: c.held } };
      const r = await judgePage(d, kind, ctx.teamId, c.after, page);
      if (r.last === null) {
        c.k++;
        c.after = 0;
        continue;
      }
      c.judged += r.read;
      c.held += r.held;
      c.after = r.last;
    }
    return { cursor: c, done: false, progress: progress(c) };
  },
};
