// What the daily cron sends per invocation at 1,000 teams (issue 35; `npm run bench cron-fanout` writes BENCHMARKS.md's
// section from this file's CRON-FANOUT line). 1,000 teams are seeded in a few INSERT … SELECT statements (an owner,
// a project with an observation stored today, retention_days on every fourth), plus one team with 45 active projects.
// Then, under the Free and the Paid plan: the scheduled invocation, every step of the dispatcher (run here, one metered
// invocation a step) and the steps of a team's own job (a one-project team and the 45-project one). D1 statements are
// counted by the meter, Durable Object and R2 calls where they leave (support/counting-env.ts); the job lanes the
// dispatcher and the team jobs start into record the starts and run nothing, so only what each invocation sends is
// measured. Every invocation must stay within the plan's limit: 50 (Free) or 1,000 (Paid) queries and subrequests.
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect, it } from 'vitest';
import { configOf } from '../../../src/config';
import { metered, watchInvocations, type Usage } from '../../../src/db/meter';
import type { CairnEnv } from '../../../src/env';
import worker from '../../../src/index';
import type { StartJob, StoredJob } from '../../../src/jobs/job-do';
import { stepContext } from '../../../src/jobs/step';
import type { JobKind } from '../../../src/jobs/types';
import { dailyDispatchJob } from '../../../src/maintenance/dispatch-job';
import { dailyTeamJob } from '../../../src/maintenance/team-job';
import { countingEnv } from '../support/counting-env';
import { seedActiveProjects, seedManyTeams } from '../support/many-teams';

const TEAMS = 1_000;

/** Lanes that record starts and run nothing (see daily-fanout.test.ts). */
function recordingLanes(): CairnEnv['JOBS'] {
  let n = 0;
  return {
    getByName: () => ({
      start: async (input: StartJob): Promise<StoredJob> => ({
        id: `job_fake${++n}`,
        kind: input.kind,
        status: 'queued',
        progress: { done: 0, total: null, unit: 'units' },
        resultJson: null,
        error: null,
        created_at: 0,
        started_at: null,
        updated_at: 0,
        finished_at: null,
        started_by: null,
        stats: {
          steps: 0,
          statements: { max: 0, total: 0 },
          ms: { max: 0, total: 0 },
          held: { max: 0 },
          subrequests: { max: 0, total: 0 },
          budget: { statements: 0, ms: 0, bytes: 0, subrequests: 0 },
        },
        actorUserId: null,
        teamId: input.teamId,
      }),
    }),
  } as unknown as CairnEnv['JOBS'];
}

interface Invocation {
  statements: number;
  subrequests: number;
}

/** Each step of a kind run here: its D1 statements and its other subrequests. */
async function steps<P, C>(kind: JobKind<P, C>, teamId: number | null, params: P, e: CairnEnv): Promise<Invocation[]> {
  const { env: counted, calls } = countingEnv(e);
  const p = kind.params.parse(params);
  let cursor = kind.init(p, { teamId, now: Date.now() }).cursor;
  const out: Invocation[] = [];
  for (let i = 0; i < 1_000; i++) {
    const ctx = stepContext({
      env: counted,
      jobId: 'job_bench',
      teamId,
      actorUserId: null,
      // The plan's budget without its 5 s of work: steps end by counts alone, however loaded the machine.
      budget: { ...configOf(e).jobStep, ms: Number.MAX_SAFE_INTEGER },
    });
    calls.reset();
    const seen: Usage[] = [];
    const stop = watchInvocations((u) => seen.push(u));
    const step = await metered(e, `job ${kind.name}`, () => kind.step(ctx, p, cursor));
    stop();
    out.push({ statements: seen[0]!.statements, subrequests: calls.total() });
    if (step.done) return out;
    cursor = step.cursor;
  }
  throw new Error(`${kind.name} did not finish`);
}

const most = (xs: Invocation[]) => ({
  statements: Math.max(...xs.map((x) => x.statements)),
  subrequests: Math.max(...xs.map((x) => x.subrequests)),
  both: Math.max(...xs.map((x) => x.statements + x.subrequests)),
});

it(`sends a bounded number of statements and subrequests per invocation for the cron at ${TEAMS} teams`, {
  timeout: 600_000,
}, async () => {
  const seeded = await seedManyTeams('bench', TEAMS);
  const one = seeded.ids[0]!;
  const busy = (await seedManyTeams('bench-busy', 1, 0)).ids[0]!;
  await seedActiveProjects(busy, 44);
  const teams = TEAMS + 1;
  const report: Record<string, unknown> = { teams };
  for (const plan of ['free', 'paid'] as const) {
    const e: CairnEnv = { ...(env as unknown as CairnEnv), CAIRN_PLAN: plan, JOBS: recordingLanes() };
    const limit = plan === 'free' ? 50 : 1_000;

    const { env: counted, calls } = countingEnv(e);
    const seen: Usage[] = [];
    const stop = watchInvocations((u) => seen.push(u));
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: '17 3 * * *' }), counted, ctx);
    await waitOnExecutionContext(ctx);
    stop();
    const cron = { statements: seen.find((u) => u.label === 'scheduled')!.statements, subrequests: calls.total() };

    const at = Date.now() - 3_600_000;
    const dispatcher = await steps(dailyDispatchJob, null, { at }, e);
    const small = await steps(dailyTeamJob, one, { at }, e);
    const large = await steps(dailyTeamJob, busy, { at }, e);
    const all = [cron, ...dispatcher, ...small, ...large];
    for (const inv of all) expect(inv.statements + inv.subrequests).toBeLessThanOrEqual(limit);
    report[plan] = {
      scheduled: cron,
      dispatcher: { steps: dispatcher.length, ...most(dispatcher) },
      team: { steps: small.length, ...most(small) },
      team45: { steps: large.length, ...most(large) },
      most: most(all).both,
    };
  }
  console.log(`CRON-FANOUT ${JSON.stringify(report)}`);
});
