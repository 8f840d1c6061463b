// The `judge-held` job (team lane): rows stored before migration 0017 were never judged for instruction-like text,
// so a teammate's old injection reached everyone's context. The job reads each kind's rows with no verdict in
// pages of PAGE by id and marks the held ones with the write path's own rule (queries.ts). Rows stored
// since 0017 and judged clean are read again and left as they were: the rule is pure, so judging twice changes
// nothing. A step run again after a restart starts from the cursor (the last id done). Started by an admin
// (POST /api/admin/jobs).
import * as z from 'zod';
import type { JobProgress } from '#shared/jobs';
import { HELD_KINDS } from '../db/held';
import { judgePage } from './queries';
import { teamDb } from '../db/shards';
import { JobFailure, type JobKind } from '../jobs/types';

/** Rows judged per read; the held ones among them are updated one statement each in one batch. */
export const PAGE = 50;

const Params = z.object({}).strict();
type Params = z.infer<typeof Params>;

interface Cursor {
  /** Index into HELD_KINDS. */
  k: number;
  after: number;
  judged: number;
  held: number;
}

const progress = (c: Cursor, done = false): JobProgress => ({
  done: c.judged,
  total: null,
  unit: 'records',
  phase: done ? 'done' : `judging ${HELD_KINDS[c.k] ?? ''} rows`,
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
    const d = await teamDb(ctx.env, ctx.teamId);
    const c = { ...start };
    while (ctx.fits({ statements: 1 + PAGE })) {
      const kind = HELD_KINDS[c.k];
      if (kind === undefined)
        return { cursor: c, done: true, progress: progress(c, true), result: { judged: c.judged, held: c.held } };
      const r = await judgePage(d, kind, ctx.teamId, c.after, PAGE);
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
