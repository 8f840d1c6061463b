// A team move run to its end inside the test (the `move-team` job's own steps, one after another, with a clock
// that jumps over the waits between them), for tests that need the move done with an environment of their own
// (a spied Vectorize binding). The moved rows are embedded the same way, by the `embed` job's steps.
import { configOf } from '../../../src/config';
import { currentUsage, metered, type Usage } from '../../../src/db/meter';
import type { CairnEnv } from '../../../src/env';
import { stepContext } from '../../../src/jobs/step';
import type { JobKind, StepOutcome } from '../../../src/jobs/types';
import { moveJob, type MoveCursor, type MoveParams } from '../../../src/transfer/move-job';
import { embedJob } from '../../../src/vectors/embed-job';

async function runInline<P, C>(e: CairnEnv, kind: JobKind<P, C>, teamId: number, params: P): Promise<unknown> {
  let now = Date.now();
  let { cursor } = kind.init(params, { teamId, now });
  for (let i = 0; i < 5_000; i++) {
    const ctx = stepContext({
      env: e,
      jobId: 'inline',
      teamId,
      actorUserId: null,
      budget: configOf(e).jobStep,
      clock: () => now,
    });
    const out = await kind.step(ctx, params, cursor);
    cursor = out.cursor;
    if (out.done) return out.result;
    now += (out.waitMs ?? 0) + 1;
  }
  throw new Error(`${kind.name} did not finish`);
}

export async function moveNow(e: CairnEnv, teamId: number, to: string, force = false): Promise<unknown> {
  const result = await runInline(e, moveJob, teamId, { to, force, settleMs: 0 });
  await runInline(e, embedJob, teamId, { mode: 'missing' });
  return result;
}

/** One step of a move run by `moveSteps`: the phase it started in, its outcome and what it asked of D1. */
export interface MoveStep {
  phase: MoveCursor['phase'];
  out: StepOutcome<MoveCursor>;
  used: Usage;
}

/**
 * Runs the `move-team` job's steps in this test's invocation with `e` (each step metered, as the lane runs it,
 * with a clock that jumps over its waits), calling `each` after every step; answers the steps. `each` may run
 * the team's writes between two steps (they land wherever the team is at that moment).
 */
export async function moveSteps(
  e: CairnEnv,
  teamId: number,
  input: Partial<MoveParams> & { to: string },
  each: (step: MoveStep, i: number) => Promise<void> | void = () => {},
  maxSteps = 5_000,
): Promise<MoveStep[]> {
  const params = moveJob.params.parse({ settleMs: 0, ...input });
  let now = Date.now();
  let { cursor } = moveJob.init(params, { teamId, now });
  const steps: MoveStep[] = [];
  for (let i = 0; i < maxSteps; i++) {
    const ctx = stepContext({
      env: e,
      jobId: 'inline',
      teamId,
      actorUserId: null,
      budget: configOf(e).jobStep,
      clock: () => now,
    });
    const phase = cursor.phase;
    const step = await metered(e, 'job move-team', async () => ({
      phase,
      out: await moveJob.step(ctx, params, cursor),
      used: currentUsage()!,
    }));
    steps.push(step);
    await each(step, i);
    if (step.out.done) return steps;
    cursor = step.out.cursor;
    now = Math.max(now + (step.out.waitMs ?? 0) + 1, Date.now());
  }
  throw new Error(`the move did not finish in ${maxSteps} steps`);
}
