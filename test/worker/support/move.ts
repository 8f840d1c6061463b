// A team move run to its end inside the test (the `move-team` job's own steps, one after another, with a clock
// that jumps over the waits between them), for tests that need the move done with an environment of their own
// (a spied Vectorize binding). The moved rows are embedded the same way, by the `embed` job's steps.
import { configOf } from '../../../src/config';
import type { CairnEnv } from '../../../src/env';
import { stepContext } from '../../../src/jobs/step';
import type { JobKind } from '../../../src/jobs/types';
import { moveJob } from '../../../src/transfer/move-job';
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
