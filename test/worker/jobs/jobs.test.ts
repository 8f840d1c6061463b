// The job mechanism (src/jobs/): a job answers at once, runs in steps that each stay within their budget,
// resumes after its object dies mid-step, takes turns with the lane's other jobs, retries a failed step and
// fails for good after a permanent failure; the API shows it only to its team (and a member only their own).
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { configOf } from '../../../src/config';
import { db } from '../../../src/db/client';
import { MAX_ATTEMPTS, MAX_DEATHS } from '../../../src/jobs/job-do';
import { isFinished } from '../../../src/shared/jobs';
import { registerJobKinds } from '../../../src/jobs/registry';
import { startJob } from '../../../src/jobs/start';
import type { JobRecord } from '../../../src/jobs/job-do';
import { JobFailure, type JobKind } from '../../../src/jobs/types';
import { call, fresh, newIdentity } from '../support/http';
import { insideSession, release, script, send, sessionStub, toolEvent } from '../pipeline/support';
import { dueNow, finishJob, jobOf, lane, runJob } from '../support/jobs';
import { idsOf } from '../support/seed';

/** What the test kind did, by tag: the unit numbers each step applied, in order. */
const applied = new Map<string, number[]>();
const order: string[] = [];
const failures = new Map<string, number>();
/** Steps begun, by tag (a step whose object died counts: it began). */
const begun = new Map<string, number>();
/** Tags whose hold was reached once: a rerun of the step goes through (the instance that held is gone). */
const held = new Set<string>();

const Params = z.object({
  tag: z.string(),
  units: z.number().int().min(1),
  /** D1 statements each unit sends (through the metered data layer). */
  perUnit: z.number().int().min(0).default(1),
  /** At this unit, wait for the fake server's answer to scenario `tag` (held by the test until released). */
  holdAt: z.number().int().optional(),
  /** At this unit, wait for the fake server's answer to scenario `tag` every time (the test kills the object there). */
  dieAt: z.number().int().optional(),
  /** Throw in this many steps before succeeding. */
  failTimes: z.number().int().default(0),
  permanent: z.boolean().default(false),
  dedupe: z.string().optional(),
});
type Params = z.infer<typeof Params>;

/** A request the fake server holds while scenario `tag` is held. */
const scenarioCall = (tag: string): RequestInit => ({
  method: 'POST',
  body: JSON.stringify({ messages: [{ role: 'user', content: `SCENARIO:${tag}` }] }),
});

const testKind: JobKind<Params, { i: number }> = {
  name: 'test-units',
  lane: 'team',
  params: Params,
  dedupe: (p) => p.dedupe ?? null,
  init: (p) => ({ cursor: { i: 0 }, progress: { done: 0, total: p.units, unit: 'units' } }),
  async step(ctx, p, cursor) {
    order.push(p.tag);
    begun.set(p.tag, (begun.get(p.tag) ?? 0) + 1);
    if (p.permanent) throw new JobFailure('test_permanent', 'this job cannot succeed');
    const failed = failures.get(p.tag) ?? 0;
    if (failed < p.failTimes) {
      failures.set(p.tag, failed + 1);
      throw new Error(`transient failure ${failed + 1}`);
    }
    let i = cursor.i;
    while (i < p.units && ctx.fits({ statements: p.perUnit })) {
      if (p.holdAt === i && !held.has(p.tag)) {
        held.add(p.tag);
        await fetch(`${env.FAKE_LLM_URL}/v1/messages`, scenarioCall(p.tag));
      }
      if (p.dieAt === i) await fetch(`${env.FAKE_LLM_URL}/v1/messages`, scenarioCall(p.tag));
      for (let s = 0; s < p.perUnit; s++) await db(env.DB).run(sql`SELECT 1`);
      applied.set(p.tag, [...(applied.get(p.tag) ?? []), i]);
      i++;
    }
    return {
      cursor: { i },
      done: i >= p.units,
      progress: { done: i, total: p.units, unit: 'units' },
      result: { units: i },
    };
  },
};
/** The same units, asked for after a change: a start that finds one running queues one more (fts-upkeep's rule). */
const afterRunningKind: JobKind<Params, { i: number }> = {
  ...testKind,
  name: 'test-after-running',
  afterRunning: true,
};
registerJobKinds([testKind, afterRunningKind] as unknown as JobKind<unknown, unknown>[]);

/** Resolves once the fake server has seen `n` requests of the scenario. */
const arrived = (id: string, n: number) =>
  fetch(`${env.FAKE_LLM_URL}/__scenario/${id}?arrived=${n}`).then((r) => r.text());

/**
 * Resets the lane's object as a deploy would (`ctx.abort`): the running instance and the step it awaits are gone,
 * and the next call starts a new instance on the same storage. Never abortAllDurableObjects: worker files share a
 * workerd, so that would reset every other file's objects too (their turns and job steps cut off at random points,
 * and their callers' promises rejected while another file runs).
 */
async function restart(teamId: number): Promise<void> {
  await runInDurableObject(lane(teamId), (_o, state) => state.abort('restarted by the test')).catch(() => undefined);
}

/** Runs the lane's alarm until `done(job)` holds (a pending alarm of the pool's own may run the step instead). */
async function stepUntil(
  teamId: number,
  id: string,
  done: (j: JobRecord) => boolean,
  rounds = 500,
): Promise<JobRecord> {
  for (let i = 0; i < rounds; i++) {
    const j = (await jobOf(teamId, id))!;
    if (done(j)) return j;
    if (!(await runDurableObjectAlarm(lane(teamId)))) await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`job ${id}: not there after ${rounds} rounds`);
}

/** D1 statements a step may send under the plan the tests run on (40 on Free, 200 on Paid). */
const STEP = configOf(env).jobStep.statements;

async function team() {
  const id = await newIdentity();
  const { teamId, userId } = await idsOf(id);
  return { id, teamId, userId };
}

describe('a job', () => {
  it('answers at once, queued, and runs in steps that each stay within the statement budget', async () => {
    const { teamId } = await team();
    const tag = fresh('t');
    // Four units fit a step, a fifth does not (9 statements a unit under Free's 40: 36), so 3 steps for 10 units.
    const perUnit = Math.floor(STEP / 4) - 1;
    const job = await startJob(env, testKind, teamId, { tag, units: 10, perUnit, failTimes: 0, permanent: false });
    expect(job.status).toBe('queued');
    expect(job.progress).toEqual({ done: 0, total: 10, unit: 'units' });
    const done = await runJob(teamId, job.id);
    expect(done.status).toBe('done');
    expect(done.result).toEqual({ units: 10 });
    expect(done.stats.steps).toBe(3);
    expect(done.stats.statements.max).toBe(4 * perUnit);
    expect(done.stats.statements.max).toBeLessThanOrEqual(done.stats.budget.statements);
    expect(applied.get(tag)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('runs a unit larger than the whole budget alone rather than never', async () => {
    const { teamId } = await team();
    const tag = fresh('t');
    const job = await startJob(env, testKind, teamId, { tag, units: 2, perUnit: 1, failTimes: 0, permanent: false });
    expect((await runJob(teamId, job.id)).status).toBe('done');
    expect(applied.get(tag)).toEqual([0, 1]);
  });

  it('resumes from its cursor when its object dies mid-step, and finishes with every unit applied', async () => {
    const { teamId } = await team();
    const tag = fresh('t');
    await script(tag, [], 0, { hold: true });
    const job = await startJob(env, testKind, teamId, {
      tag,
      units: 6,
      // Three units fit a step, a fourth does not (12 statements a unit under Free's 40).
      perUnit: Math.floor(STEP / 3) - 1,
      holdAt: 4,
      failTimes: 0,
      permanent: false,
    });
    // Step 1 applies units 0–2; step 2 applies unit 3 and waits at unit 4.
    // (The alarms may fire by themselves meanwhile: the lane runs one step at a time either way.)
    void runDurableObjectAlarm(lane(teamId))
      .then(() => runDurableObjectAlarm(lane(teamId)))
      .catch(() => undefined);
    await arrived(tag, 1);
    expect(applied.get(tag)).toEqual([0, 1, 2, 3]);
    // Another object of the runtime (this file's, or an earlier file's: worker files share a workerd).
    const bystander = await newIdentity();
    const sid = fresh('s');
    await send(bystander.token, 'observations', toolEvent(sid, 'npm test'));
    const other = sessionStub((await idsOf(bystander)).teamId, sid);
    const before = await insideSession(other, (instance) => instance.instanceId);
    await restart(teamId);
    // The new instance finds the step in flight and runs it again from the saved cursor (unit 3).
    expect((await jobOf(teamId, job.id))!.status).toBe('running');
    const done = await runJob(teamId, job.id);
    expect(done.status).toBe('done');
    // Unit 3 ran in the step that died and again in its rerun (a kind's units must be idempotent); none was skipped.
    expect(applied.get(tag)).toEqual([0, 1, 2, 3, 3, 4, 5]);
    // The step that died recorded nothing; its rerun and the first step did.
    expect(done.stats.steps).toBe(2);
    // Only the lane's object was restarted: the other object kept its instance.
    expect(await insideSession(other, (instance) => instance.instanceId)).toBe(before);
    await release(tag);
  });

  it('counts a step whose object dies as an attempt: after MAX_DEATHS it fails, and the lane runs the next job', async () => {
    const { teamId } = await team();
    const tag = fresh('t');
    await script(tag, [], 0, { hold: true });
    const params = { units: 3, perUnit: 1, failTimes: 0, permanent: false };
    // Its step dies at unit 1 every time, as a step past 30 s of CPU or 128 MB would; the job behind it waits.
    const doomed = await startJob(env, testKind, teamId, { ...params, tag, dieAt: 1 });
    const behind = await startJob(env, testKind, teamId, { ...params, tag: fresh('b') });
    const killer = (async () => {
      for (let death = 1; death <= MAX_DEATHS; death++) {
        await arrived(tag, death);
        await restart(teamId);
      }
      // Any later step of the doomed job is answered (so a lane that ran it again would finish it, not hang).
      await release(tag);
    })();
    // A call that meets the object as the killer resets it fails: it is made again on the next instance.
    const finished = async (id: string) =>
      jobOf(teamId, id).then(
        (j) => isFinished(j!.status),
        () => false,
      );
    for (let i = 0; i < 100 && !((await finished(doomed.id)) && (await finished(behind.id))); i++) {
      await dueNow(teamId).catch(() => undefined);
      if (!(await runDurableObjectAlarm(lane(teamId)).catch(() => true))) await new Promise((r) => setTimeout(r, 5));
    }
    await killer;
    const dead = (await jobOf(teamId, doomed.id))!;
    expect(dead.status).toBe('failed');
    expect(dead.error?.code).toBe('step_died');
    // Three instances began the step and died in it; no fourth began it.
    expect(begun.get(tag)).toBe(MAX_DEATHS);
    expect(applied.get(tag)).toEqual([0, 0, 0]);
    expect((await jobOf(teamId, behind.id))!.status).toBe('done');
  });

  it('is started once per dedupe key while one is queued or running', async () => {
    const { teamId } = await team();
    const tag = fresh('t');
    await script(tag, [], 0, { hold: true });
    const key = fresh('k');
    const first = await startJob(env, testKind, teamId, {
      tag,
      units: 2,
      perUnit: 1,
      holdAt: 0,
      failTimes: 0,
      permanent: false,
      dedupe: key,
    });
    const stepping = runDurableObjectAlarm(lane(teamId)).catch(() => undefined);
    await arrived(tag, 1);
    const second = await startJob(env, testKind, teamId, {
      tag,
      units: 2,
      perUnit: 1,
      failTimes: 0,
      permanent: false,
      dedupe: key,
    });
    expect(second.id).toBe(first.id);
    await release(tag);
    await stepping;
    expect((await runJob(teamId, first.id)).status).toBe('done');
    const third = await startJob(env, testKind, teamId, {
      tag,
      units: 1,
      perUnit: 1,
      failTimes: 0,
      permanent: false,
      dedupe: key,
    });
    expect(third.id).not.toBe(first.id);
    await runJob(teamId, third.id);
  });

  it('queues one more behind a running job of a kind asked for after a change, and at most one', async () => {
    const { teamId } = await team();
    const tag = fresh('t');
    await script(tag, [], 0, { hold: true });
    const key = fresh('k');
    const params = { tag, units: 2, perUnit: 1, failTimes: 0, permanent: false, dedupe: key };
    const first = await startJob(env, afterRunningKind, teamId, { ...params, holdAt: 0 });
    const stepping = runDurableObjectAlarm(lane(teamId)).catch(() => undefined);
    await arrived(tag, 1);
    // The running job may be past what this start was asked for: another is queued behind it.
    const second = await startJob(env, afterRunningKind, teamId, params);
    expect(second.id).not.toBe(first.id);
    expect(second.status).toBe('queued');
    // A queued one already covers any later change: it is answered.
    const third = await startJob(env, afterRunningKind, teamId, params);
    expect(third.id).toBe(second.id);
    await release(tag);
    await stepping;
    expect((await runJob(teamId, first.id)).status).toBe('done');
    expect((await runJob(teamId, second.id)).status).toBe('done');
  });

  it('waits for its notBefore, and a start that finds it still queued moves it later, never earlier', async () => {
    const { teamId } = await team();
    const tag = fresh('t');
    const key = fresh('k');
    const params = { tag, units: 1, perUnit: 1, failTimes: 0, permanent: false, dedupe: key };
    const nextAt = (id: string) =>
      runInDurableObject(lane(teamId), async (_o, state) =>
        state.storage.sql.exec<{ next_at: number | null }>('SELECT next_at FROM jobs WHERE id = ?', id).one(),
      ).then((r) => r.next_at);
    const soon = Date.now() + 60_000;
    const first = await startJob(env, testKind, teamId, params, null, { notBefore: soon });
    expect(await nextAt(first.id)).toBe(soon);
    // The lane's alarm finds nothing due: the job does not run before its time.
    await runDurableObjectAlarm(lane(teamId));
    expect((await jobOf(teamId, first.id))!).toMatchObject({ status: 'queued', stats: { steps: 0 } });
    expect(applied.get(tag)).toBeUndefined();
    const later = await startJob(env, testKind, teamId, params, null, { notBefore: soon + 30_000 });
    expect(later.id).toBe(first.id);
    expect(await nextAt(first.id)).toBe(soon + 30_000);
    await startJob(env, testKind, teamId, params, null, { notBefore: soon });
    expect(await nextAt(first.id)).toBe(soon + 30_000);
    // A start without a time answers the queued job and leaves its time alone.
    await startJob(env, testKind, teamId, params);
    expect(await nextAt(first.id)).toBe(soon + 30_000);
    await dueNow(teamId);
    expect((await runJob(teamId, first.id)).status).toBe('done');
    expect(applied.get(tag)).toEqual([0]);
  });

  it('takes turns with the other jobs of its lane, one step each', async () => {
    const { teamId } = await team();
    const a = fresh('a');
    const b = fresh('b');
    order.length = 0;
    // A job holding the lane while both are queued: otherwise the pool's own alarm may run a's first step before b
    // exists (on a loaded machine), and a's second step is then rightly due before b's first.
    const blocker = fresh('blocker');
    await script(blocker, [], 0, { hold: true });
    const jx = await startJob(env, testKind, teamId, {
      tag: blocker,
      units: 1,
      perUnit: 1,
      holdAt: 0,
      failTimes: 0,
      permanent: false,
    });
    const holding = runDurableObjectAlarm(lane(teamId)).catch(() => undefined);
    await arrived(blocker, 1);
    const ja = await startJob(env, testKind, teamId, {
      tag: a,
      units: 3,
      // One unit a step: two do not fit.
      perUnit: Math.floor((STEP * 3) / 4),
      failTimes: 0,
      permanent: false,
    });
    const jb = await startJob(env, testKind, teamId, {
      tag: b,
      units: 3,
      // One unit a step: two do not fit.
      perUnit: Math.floor((STEP * 3) / 4),
      failTimes: 0,
      permanent: false,
    });
    await release(blocker);
    await holding;
    expect((await runJob(teamId, jx.id)).status).toBe('done');
    await runJob(teamId, ja.id);
    await runJob(teamId, jb.id);
    expect(order.filter((t) => t === a || t === b)).toEqual([a, b, a, b, a, b]);
  });

  it('runs a failed step again after a pause, and fails for good after a permanent failure or too many attempts', async () => {
    const { teamId } = await team();
    const flaky = fresh('f');
    const j1 = await startJob(env, testKind, teamId, {
      tag: flaky,
      units: 1,
      perUnit: 1,
      failTimes: 2,
      permanent: false,
    });
    // Until its first attempt (the test's alarm, or the pool's own: whichever comes first runs it).
    const paused = await stepUntil(teamId, j1.id, (j) => j.error !== null);
    expect(paused.status).toBe('running');
    // The pause is 2 s: on a loaded machine the pool's alarm may have run the second attempt too by now.
    expect(paused.error).toMatchObject({
      code: 'step_failed',
      message: expect.stringMatching(/^transient failure [12]$/),
    });
    const ok = await finishJob(teamId, j1.id);
    expect(ok.status).toBe('done');
    expect(ok.error).toBeNull();
    expect(failures.get(flaky)).toBe(2);

    const doomed = await startJob(env, testKind, teamId, {
      tag: fresh('p'),
      units: 1,
      perUnit: 1,
      failTimes: 0,
      permanent: true,
    });
    const failed = await runJob(teamId, doomed.id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toEqual({ code: 'test_permanent', message: 'this job cannot succeed' });

    const wornTag = fresh('w');
    const worn = await startJob(env, testKind, teamId, {
      tag: wornTag,
      units: 1,
      perUnit: 1,
      failTimes: 99,
      permanent: false,
    });
    const gaveUp = await finishJob(teamId, worn.id);
    expect(gaveUp.status).toBe('failed');
    expect(gaveUp.error?.code).toBe('step_failed');
    expect(failures.get(wornTag)).toBe(MAX_ATTEMPTS);
  });
});

describe('jobs over HTTP', () => {
  it('shows a team its jobs and nobody else; a member only the jobs they started', async () => {
    const { id: owner, teamId } = await team();
    const started = await call('/api/admin/jobs', { token: owner.token, json: { kind: 'embed' } });
    expect(started.status).toBe(202);
    const { job } = (await started.json()) as { job: { id: string; kind: string; status: string; started_by: string } };
    expect(job).toMatchObject({ kind: 'embed', status: 'queued', started_by: owner.user });

    const read = await call(`/api/admin/jobs/${job.id}`, { token: owner.token });
    expect(read.status).toBe(200);
    const list = (await (await call('/api/admin/jobs', { token: owner.token })).json()) as { jobs: { id: string }[] };
    expect(list.jobs.map((j) => j.id)).toContain(job.id);
    expect((await call(`/api/jobs/${job.id}`, { token: owner.token })).status).toBe(200);

    const stranger = await newIdentity();
    expect((await call(`/api/admin/jobs/${job.id}`, { token: stranger.token })).status).toBe(404);
    expect((await call(`/api/jobs/${job.id}`, { token: stranger.token })).status).toBe(404);

    const handle = fresh('m');
    expect((await call('/api/admin/users', { token: owner.token, json: { handle } })).status).toBe(201);
    const minted = await call('/api/admin/devices', { token: owner.token, json: { name: fresh('d'), user: handle } });
    const member = ((await minted.json()) as { token: string }).token;
    expect((await call(`/api/jobs/${job.id}`, { token: member })).status).toBe(404);
    expect((await call('/api/admin/jobs', { token: member })).status).toBe(403);
    expect(
      (await call('/api/admin/jobs', { token: owner.token, json: { kind: 'test-units', params: {} } })).status,
    ).toBe(400);
    expect((await call('/api/admin/jobs', { token: owner.token, json: { kind: 'nope' } })).status).toBe(400);
    await runJob(teamId, job.id);
  });
});
