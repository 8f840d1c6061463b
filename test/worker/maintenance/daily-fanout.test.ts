// The daily cron fans out (issue 35): the scheduled invocation only starts the dispatcher job; the dispatcher pages
// through the teams and starts one `daily-team` job per team, each step an invocation of its own within Free's and
// Paid's limits; every team's job starts its retention sweep, backup and consolidation jobs in bounded units; the
// `daily` record of maintenance_runs shows the run's progress, its end and its failures. Counted, never timed:
// statements by the meter, Durable Object and R2 calls where they leave (support/counting-env.ts).
// This file has a workerd of its own (vitest.config.ts FRESH_RUNTIME_FILES): the dispatcher visits every team the
// database holds, and here those are only this file's. Where a test only counts what the dispatcher sends, its
// starts go to recording lanes (`lanes`) instead of the real objects, so no team's work runs behind the test.
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { configOf } from '../../../src/config';
import { metered, watchInvocations, type Usage } from '../../../src/db/meter';
import type { CairnEnv } from '../../../src/env';
import type { TeamHealthJson } from '../../../src/health/types';
import worker from '../../../src/index';
import type { StartJob, StoredJob } from '../../../src/jobs/job-do';
import { listJobs } from '../../../src/jobs/start';
import { stepContext } from '../../../src/jobs/step';
import type { JobKind } from '../../../src/jobs/types';
import { startDailyMaintenance } from '../../../src/maintenance/daily';
import { dailyDispatchJob, type DispatchCursor, TEAMS_PER_STEP } from '../../../src/maintenance/dispatch-job';
import { dailyTeamJob, PROJECTS_PER_UNIT } from '../../../src/maintenance/team-job';
import { countingEnv } from '../support/counting-env';
import { call, newIdentity } from '../support/http';
import { finishJob, runOpenJobs } from '../support/jobs';
import { seedActiveProjects, seedManyTeams } from '../support/many-teams';

const DAY = 86_400_000;
/**
 * A day of its own per run (one dispatcher and one team job per team and day), all before the seeded rows were
 * written: a run counts as active the projects with observations since a day before it.
 */
let day = Date.now() - 60 * 86_400_000;
const nextDay = () => (day += DAY);

/** The plan's step budget without its 5 s of work: steps here end by counts alone, however loaded the machine. */
const untimed = (e: CairnEnv) => ({ ...configOf(e).jobStep, ms: Number.MAX_SAFE_INTEGER });

const teamCount = async () => (await env.DB.prepare('SELECT COUNT(*) AS n FROM teams').first<{ n: number }>())!.n;
/** Seeds teams until the database holds at least `n` (each test asks for what it needs, in whatever order they run). */
async function atLeast(n: number, tag: string, active = true): Promise<number> {
  const short = n - (await teamCount());
  if (short > 0) await seedManyTeams(tag, short, 4, active);
  return teamCount();
}
const teamIds = async () =>
  (await env.DB.prepare('SELECT id FROM teams ORDER BY id').all<{ id: number }>()).results.map((r) => r.id);

/**
 * Job lanes that take every start and run nothing: each start is recorded under the lane's name and answered with a
 * queued job. `fail` makes a start throw instead (a lane that cannot be reached, an object that went away).
 */
function lanes(fail: (name: string, n: number) => boolean = () => false) {
  const starts = new Map<string, number>();
  let n = 0;
  const JOBS = {
    getByName: (name: string) => ({
      start: async (input: StartJob): Promise<StoredJob> => {
        if (fail(name, n++)) throw new Error('lane unreachable');
        starts.set(name, (starts.get(name) ?? 0) + 1);
        const now = Date.now();
        return {
          id: `job_fake${n}`,
          kind: input.kind,
          status: 'queued',
          progress: { done: 0, total: null, unit: 'units' },
          resultJson: null,
          error: null,
          created_at: now,
          started_at: null,
          updated_at: now,
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
        };
      },
    }),
  } as unknown as CairnEnv['JOBS'];
  return { JOBS, starts };
}

/** The Worker's scheduled handler as Cloudflare calls it: its statements (meter) and subrequests (counted env). */
async function scheduled(at: number): Promise<{ statements: number; calls: number }> {
  const { env: counted, calls } = countingEnv({ ...(env as unknown as CairnEnv), JOBS: lanes().JOBS });
  const seen: Usage[] = [];
  const stop = watchInvocations((u) => seen.push(u));
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: at, cron: '17 3 * * *' }), counted, ctx);
  await waitOnExecutionContext(ctx);
  stop();
  const usage = seen.filter((u) => u.label === 'scheduled');
  expect(usage).toHaveLength(1);
  return { statements: usage[0]!.statements, calls: calls.total() };
}

interface StepUse {
  statements: number;
  calls: number;
}

/**
 * Runs a kind's steps here, one metered invocation each, with `e` (a counting env, maybe the Free plan's) until it is
 * done: what each step sent. `stepEnv(i)` may give step i another env (one that breaks it: that step is lost and
 * runs again from the same cursor, as after its object died).
 */
async function stepsOf<P, C>(
  kind: JobKind<P, C>,
  teamId: number | null,
  params: P,
  e: CairnEnv,
  stepEnv: (i: number) => CairnEnv | null = () => null,
): Promise<{ steps: StepUse[]; result: unknown }> {
  const { env: counted, calls } = countingEnv(e);
  const p = kind.params.parse(params);
  let cursor = kind.init(p, { teamId, now: Date.now() }).cursor;
  const steps: StepUse[] = [];
  for (let i = 0; i < 200; i++) {
    const run = stepEnv(i) ?? counted;
    const ctx = stepContext({ env: run, jobId: 'job_inline', teamId, actorUserId: null, budget: untimed(e) });
    calls.reset();
    const seen: Usage[] = [];
    const stop = watchInvocations((u) => seen.push(u));
    try {
      const out = await metered(e, `job ${kind.name}`, () => kind.step(ctx, p, cursor));
      if (out.done)
        return { steps: [...steps, { statements: seen[0]!.statements, calls: calls.total() }], result: out.result };
      cursor = out.cursor;
    } catch {
      // the step is lost; the next one starts from the same cursor
    } finally {
      stop();
    }
    steps.push({ statements: seen[0]!.statements, calls: calls.total() });
  }
  throw new Error(`${kind.name} did not finish`);
}

describe('the daily cron', () => {
  it('sends the same statements and Durable Object calls in its scheduled invocation for 3 teams and for 30', async () => {
    // 3 and 30 when this test runs first; 27 more teams in any case.
    const before = await atLeast(3, 'cron-a', false);
    const three = await scheduled(nextDay());
    await seedManyTeams('cron-b', 27, 4, false);
    expect(await teamCount()).toBe(before + 27);
    const thirty = await scheduled(nextDay());
    expect(thirty).toEqual(three);
    // Only the dispatcher's start: one Durable Object call and no statement, whatever the number of teams.
    expect(three).toEqual({ statements: 0, calls: 1 });
  });

  // The one test here whose jobs run in their lanes for real: every team's sweep, backup and consolidation behind it.
  it("runs in its job lane to the end, a page of teams a step, and every team's own job does the team's work", {
    timeout: 120_000,
  }, async () => {
    const owner = await newIdentity();
    // A team with more active projects than a unit starts: its own job pages through them too.
    const busy = (await seedManyTeams('cron-busy', 1)).ids[0]!;
    await seedActiveProjects(busy, PROJECTS_PER_UNIT + 5);
    // Teams without observations (no consolidation) but the busy one: only what the test needs runs behind it.
    const teams = await atLeast(TEAMS_PER_STEP + 1, 'cron-c', false);

    const at = nextDay();
    const dispatcher = await finishJob(null, (await startDailyMaintenance(env, at))!);
    expect(dispatcher).toMatchObject({ status: 'done', result: { teams } });
    // The server-wide parts, then a page of teams a step (the last page short, or empty when the count divides).
    expect(dispatcher.stats.steps).toBe(1 + Math.floor(teams / TEAMS_PER_STEP) + 1);
    // The first step: three parts' records and starts (a job per shard, two of them per shard) and its own record.
    expect(dispatcher.stats.statements.max).toBeLessThanOrEqual(9);
    // Every subrequest of a step, its statements included: a page's 25 starts, the page and the record.
    expect(dispatcher.stats.subrequests.max).toBeLessThanOrEqual(TEAMS_PER_STEP + 2);

    for (const id of await teamIds()) {
      await runOpenJobs(id, 'daily-team'); // (or the lane's own alarm ran it already)
      const jobs = await listJobs(env, id, 5, 'daily-team');
      expect(
        jobs.map((j) => j.status),
        `team ${id}`,
      ).toEqual(['done']);
      const job = jobs[0];
      expect(job!.stats.statements.max).toBeLessThanOrEqual(job!.stats.budget.statements);
      expect(job!.stats.subrequests.max).toBeLessThanOrEqual(job!.stats.budget.subrequests);
    }
    const [busyDay] = await listJobs(env, busy, 1, 'daily-team');
    expect(busyDay!.result).toMatchObject({ consolidate: PROJECTS_PER_UNIT + 6, backup: expect.any(String) });
    expect(await listJobs(env, busy, 100, 'consolidate-project')).toHaveLength(PROJECTS_PER_UNIT + 6);

    // The record: the run ended ok with every team started; a team's admins see it.
    const h = (await (await call('/api/admin/health', { token: owner.token })).json()) as TeamHealthJson;
    expect(h.maintenance.find((m) => m.job === 'daily')).toMatchObject({
      started_at: at,
      ok: true,
      error: null,
      detail: { job: dispatcher.id, teams },
    });
    expect(h.maintenance.map((m) => m.job)).toEqual(expect.arrayContaining(['fts_check', 'upgrade_check']));
  });

  it("keeps every step within Free's 50 and Paid's 1,000 queries and subrequests, the same with a page of teams more", async () => {
    const busy = (await seedManyTeams('cron-free', 1)).ids[0]!;
    await seedActiveProjects(busy, 2 * PROJECTS_PER_UNIT + 5);
    const most = async () => {
      const out: Record<string, StepUse> = {};
      for (const plan of ['paid', 'free'] as const) {
        const e = { ...(env as unknown as CairnEnv), CAIRN_PLAN: plan, JOBS: lanes().JOBS };
        const { steps } = await stepsOf(dailyDispatchJob, null, { at: nextDay() }, e);
        const limit = plan === 'free' ? 50 : 1_000;
        for (const s of steps) expect(s.statements + s.calls).toBeLessThanOrEqual(limit);
        // The busy team's own job: its 45 projects' starts in units of PROJECTS_PER_UNIT, more than one step on Free.
        const team = await stepsOf(dailyTeamJob, busy, { at: day }, e);
        for (const s of team.steps) expect(s.statements + s.calls).toBeLessThanOrEqual(limit);
        expect(team.result).toMatchObject({ consolidate: 2 * PROJECTS_PER_UNIT + 6 });
        if (plan === 'free') expect(team.steps.length).toBeGreaterThan(1);
        out[plan] = {
          statements: Math.max(...steps.slice(1).map((s) => s.statements)),
          calls: Math.max(...steps.map((s) => s.calls)),
        };
      }
      return out;
    };
    await atLeast(TEAMS_PER_STEP + 1, 'cron-pages');
    const pages = Math.ceil((await teamCount()) / TEAMS_PER_STEP);
    const before = await most();
    await seedManyTeams('cron-more', TEAMS_PER_STEP);
    expect(Math.ceil((await teamCount()) / TEAMS_PER_STEP)).toBe(pages + 1);
    const after = await most();
    expect(after).toEqual(before);
    expect(after.paid).toEqual({ statements: 2, calls: TEAMS_PER_STEP });
  });

  it('goes on from the saved cursor after a step dies: no team before it started again, none missed', async () => {
    await atLeast(2 * TEAMS_PER_STEP + 1, 'cron-resume');
    const ids = await teamIds();
    const live = lanes();
    // The third step (the second page of teams) dies after its fifth start, before its cursor is kept.
    const dying = lanes((_name, n) => n >= 5);
    const e = { ...(env as unknown as CairnEnv), JOBS: live.JOBS };
    const { steps, result } = await stepsOf(dailyDispatchJob, null, { at: nextDay() }, e, (i) =>
      i === 2 ? { ...e, JOBS: dying.JOBS } : null,
    );
    expect(result).toMatchObject({ teams: ids.length });
    expect(steps).toHaveLength(1 + Math.floor(ids.length / TEAMS_PER_STEP) + 1 + 1);
    const started = (id: number) => (live.starts.get(`team:${id}`) ?? 0) + (dying.starts.get(`team:${id}`) ?? 0);
    // Every team's job was started; only the five the dead step reached were started again, the first page's never.
    expect(ids.filter((id) => started(id) === 0)).toEqual([]);
    expect(ids.filter((id) => started(id) === 2)).toEqual(ids.slice(TEAMS_PER_STEP, TEAMS_PER_STEP + 5));
    expect(ids.filter((id) => started(id) > 2)).toEqual([]);
  });

  it('shows a failing run in the record until a step goes through, and its end once every team is started', async () => {
    await atLeast(TEAMS_PER_STEP + 1, 'cron-fail');
    const owner = await newIdentity();
    const health = async () =>
      ((await (await call('/api/admin/health', { token: owner.token })).json()) as TeamHealthJson).maintenance.find(
        (m) => m.job === 'daily',
      );
    const ok: CairnEnv = { ...(env as unknown as CairnEnv), JOBS: lanes().JOBS };
    const broken: CairnEnv = { ...ok, JOBS: lanes(() => true).JOBS };
    const at = nextDay();
    const p = dailyDispatchJob.params.parse({ at });
    const step = (e: CairnEnv, c: DispatchCursor, run = p) =>
      metered(e, 'job daily', () =>
        dailyDispatchJob.step(
          stepContext({ env: e, jobId: 'job_by_hand', teamId: null, actorUserId: null, budget: untimed(e) }),
          run,
          c,
        ),
      );
    const started = await step(ok, dailyDispatchJob.init(p, { teamId: null, now: at }).cursor);
    expect(await health()).toMatchObject({ started_at: at, ok: null, finished_at: null, detail: { teams: 0 } });
    await expect(step(broken, started.cursor)).rejects.toThrow('lane unreachable');
    expect(await health()).toMatchObject({ started_at: at, ok: false, error: 'lane unreachable' });
    // The job runs the step again; it goes through: the failure is cleared and the progress shown.
    let out = await step(ok, started.cursor);
    expect(await health()).toMatchObject({ started_at: at, ok: null, error: null, detail: { teams: TEAMS_PER_STEP } });
    while (!out.done) out = await step(ok, out.cursor);
    expect(await health()).toMatchObject({ started_at: at, ok: true, detail: { teams: await teamCount() } });
    // A step of an earlier day's run that comes late leaves this day's record alone.
    await step(ok, { phase: 'teams', after: 0, teams: 0 }, dailyDispatchJob.params.parse({ at: at - DAY }));
    expect(await health()).toMatchObject({ started_at: at, ok: true, detail: { teams: await teamCount() } });
  });
});
