// Driving job lanes in tests: run a lane's alarm (one step each) until a job is finished, instead of waiting
// for the alarms miniflare fires by itself; read a job as the API shows it.
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { jobRecord, jobStub, type JobRecord } from '../../../src/jobs/job-do';
import { isFinished } from '../../../src/shared/jobs';
import { configOf } from '../../../src/config';
import { metered } from '../../../src/db/meter';
import type { CairnEnv } from '../../../src/env';
import { stepContext } from '../../../src/jobs/step';
import type { JobKind, StepOutcome } from '../../../src/jobs/types';

export const lane = (teamId: number | null) => jobStub(env, teamId);

/** The job as the API reads it (result parsed), or null. */
export async function jobOf(teamId: number | null, id: string): Promise<JobRecord | null> {
  const j = await lane(teamId).get(id);
  return j && jobRecord(j);
}

/** Makes every waiting job of the lane due now (a failed step's pause, lifted by the test instead of waited out). */
export async function dueNow(teamId: number | null): Promise<void> {
  await runInDurableObject(lane(teamId), async (_o, state) => {
    state.storage.sql.exec('UPDATE jobs SET next_at = 0 WHERE next_at IS NOT NULL');
    await state.storage.setAlarm(Date.now());
  });
}

/**
 * Runs the lane's steps until job `id` is finished or has run `maxSteps` steps (a job that never ends stops there).
 * Steps miniflare fires by itself meanwhile count as well: the lane runs one at a time. The loop counts the job's
 * own steps, not alarm calls: while miniflare runs a long step by itself, the lane answers an alarm by rescheduling
 * (its step lease), so counted calls ran out before one step of a job at 100k rows ended. A job that never steps
 * fails its test by the test's timeout.
 */
export async function runJob(teamId: number | null, id: string, maxSteps = 500): Promise<JobRecord> {
  const stub = lane(teamId);
  for (;;) {
    const job = await jobOf(teamId, id);
    if (!job) throw new Error(`no job ${id}`);
    if (isFinished(job.status) || job.stats.steps >= maxSteps) return job;
    if (!(await runDurableObjectAlarm(stub))) await new Promise((r) => setTimeout(r, 5));
  }
}

/** Runs every queued or running job of `kind` in the lane to its end (the FTS upkeep a forget asked for). */
export async function runOpenJobs(teamId: number | null, kind: string): Promise<JobRecord[]> {
  const open = (await lane(teamId).list(200, kind)).filter((j) => !isFinished(j.status));
  const done: JobRecord[] = [];
  for (const j of open) done.push(await runJob(teamId, j.id));
  return done;
}

/**
 * Runs the FTS upkeep cycles open on the server's lane to their end, and again the follow-up a capped cycle queues
 * (writes of other files during it kept restarting its merge), at most `rounds` times: each cycle's status and result.
 */
export async function settleFtsUpkeep(rounds = 4): Promise<unknown[]> {
  const cycles: unknown[] = [];
  for (let i = 0; i < rounds; i++) {
    const open = (await lane(null).list(200, 'fts-upkeep')).filter((j) => !isFinished(j.status));
    if (!open.length) break;
    for (const j of open) {
      const done = await finishJob(null, j.id);
      cycles.push([done.status, done.result]);
    }
  }
  return cycles;
}

/** Runs the lane's steps until job `id` is finished, each waiting step made due at once (a move's pauses). */
export async function finishJob(teamId: number | null, id: string, maxRounds = 2_000): Promise<JobRecord> {
  const stub = lane(teamId);
  for (let i = 0; i < maxRounds; i++) {
    const job = await jobOf(teamId, id);
    if (!job) throw new Error(`no job ${id}`);
    if (isFinished(job.status)) return job;
    await dueNow(teamId);
    if (!(await runDurableObjectAlarm(stub))) await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`job ${id} did not finish`);
}

/**
 * Runs a kind's steps in this test's own invocation with `env` (a test's env with fake production bindings,
 * which the lane's object does not have) until it is done; each step within the configured budget.
 */
export async function runKindInline<P, C>(
  e: CairnEnv,
  kind: JobKind<P, C>,
  teamId: number | null,
  params: P,
  actorUserId: number | null = null,
  maxSteps = 500,
): Promise<StepOutcome<C>> {
  const p = kind.params.parse(params);
  let cursor = kind.init(p, { teamId, now: Date.now() }).cursor;
  for (let i = 0; i < maxSteps; i++) {
    const ctx = stepContext({ env: e, jobId: 'inline', teamId, actorUserId, budget: configOf(e).jobStep });
    const out = await metered(e, `job ${kind.name}`, () => kind.step(ctx, p, cursor));
    if (out.done) return out;
    cursor = out.cursor;
  }
  throw new Error(`${kind.name} did not finish in ${maxSteps} steps`);
}
