// The team move as a job (src/jobs/): a team goes from one D1 database to another in bounded steps, each its own
// invocation of the team's job lane, so a move of any size never holds a database, or the service, for long.
// Copy first, close writes only for the tail (issue 35):
//   while the team writes (move-open.ts): `start` reads where the team is; `clear` deletes what an interrupted
//     earlier move left on the target and turns on the old database's change log for the team (migration 0024:
//     triggers note every insert, update and delete of its rows); `copy` restores the records a piece at a time
//     through the import's one write path; `extras` copies what the export leaves out (audit log, usage,
//     aliases, correction history, prime tombstones); `delta` applies the change log in rounds (move-delta.ts)
//     until what the team wrote during the last round is small (TAIL_MAX entries);
//   writes closed (move-closed.ts): `close` the gate, `quiesce` the team's sessions, `tail` the last round with
//     the old database at rest, then the map flips and `release` lets the sessions go and opens the gate;
//   after (move-finish.ts): `vectors` deletes the old rows' vectors, `drop` the old rows, `embed` starts the
//     moved rows' embedding.
// Every row stored anywhere must name a session and a project of its own team (migration 0015 refuses any
// other), so a session object that kept an old id can fail a turn, never file it under another team's rows.
import { JobFailure, type JobKind } from '../jobs/types';
import { CLOSED_PHASES_STEPS } from './move-closed';
import {
  CLOSED_PHASES,
  logStart,
  MoveParams,
  zeroCounts,
  type MoveCursor,
  type Phase,
  type PhaseStep,
} from './move-cursor';
import { COPY_START } from './move-copy';
import { FINISH_PHASES } from './move-finish';
import { OPEN_PHASES } from './move-open';

export { GATE_GRACE_MS, MoveParams, QUIESCE_MAX_MS, TAIL_MAX, type MoveCursor } from './move-cursor';

const STEPS: Record<Phase, PhaseStep> = { ...OPEN_PHASES, ...CLOSED_PHASES_STEPS, ...FINISH_PHASES };

const progressOf = (c: MoveCursor) => ({
  done: c.counts.observations + c.counts.summaries + c.counts.prompts,
  total: null,
  unit: 'records',
  phase: c.phase,
});

export const moveJob: JobKind<MoveParams, MoveCursor> = {
  name: 'move-team',
  lane: 'team',
  params: MoveParams,
  dedupe: () => 'move-team',
  init: () => {
    const cursor: MoveCursor = {
      phase: 'start',
      moveId: crypto.randomUUID(),
      from: null,
      closedAt: 0,
      held: [],
      waiting: [],
      at: 0,
      n: 0,
      copy: COPY_START,
      projectIds: [],
      extras: { part: 0, after: 0 },
      log: logStart(),
      vec: { p: 0, t: 0, from: null },
      flippedAt: 0,
      counts: zeroCounts(),
      reason: null,
      closedSteps: 0,
      closedMs: 0,
    };
    return { cursor, progress: progressOf(cursor) };
  },
  async step(ctx, params, cursor) {
    if (ctx.teamId === null) throw new JobFailure('team_required', 'A move runs for one team.');
    const out = await STEPS[cursor.phase](ctx, params, cursor, ctx.teamId);
    // How long the team could not write, in steps (a test's bound) and in time (the benchmark's).
    const c = CLOSED_PHASES.includes(cursor.phase) ? { ...out.c, closedSteps: out.c.closedSteps + 1 } : out.c;
    return {
      cursor: c,
      done: out.done ?? false,
      progress: progressOf(c),
      result: out.result,
      waitMs: out.waitMs,
    };
  },
};
