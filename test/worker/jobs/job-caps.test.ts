// Per-person caps on open jobs: a team's lane runs its jobs' steps in turn, so every job one member keeps open
// delays everyone else's. A person may have at most OPEN_JOBS_PER_PERSON jobs queued or running in a lane; the next
// start is 429 too_many_jobs and starts nothing, and an admin's job then waits at most that many steps of theirs.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { OPEN_JOBS_PER_PERSON } from '../../../src/jobs/job-do';
import { registerJobKinds } from '../../../src/jobs/registry';
import { startJob } from '../../../src/jobs/start';
import type { JobKind } from '../../../src/jobs/types';
import { AppError } from '../../../src/lib/errors';
import type { WireJob } from '../../../src/shared/jobs';
import { call, fresh, newIdentity } from '../support/http';
import { arrived, release, script } from '../pipeline/support';
import { lane, runJob } from '../support/jobs';
import { idsOf, seedObservation, seedProject, seedSession } from '../support/seed';

/**
 * Which job each step of the lane ran, in order (steps run in this isolate), as `<tag>:<step>`: a step run again
 * after its object was reset (another file's abortAllDurableObjects) is the same entry.
 */
const order: string[] = [];

const Params = z.object({
  tag: z.string(),
  steps: z.number().int().min(1),
  /** The first step waits for the fake server's answer to this scenario (held by the test): the lane is busy. */
  hold: z.string().optional(),
});
type Params = z.infer<typeof Params>;

/** A job of `steps` steps, one unit each. */
const slowKind: JobKind<Params, { i: number }> = {
  name: 'test-caps',
  lane: 'team',
  params: Params,
  init: (p) => ({ cursor: { i: 0 }, progress: { done: 0, total: p.steps, unit: 'steps' } }),
  async step(_ctx, p, cursor) {
    if (!order.includes(`${p.tag}:${cursor.i}`)) order.push(`${p.tag}:${cursor.i}`);
    if (p.hold && cursor.i === 0)
      await fetch(`${env.FAKE_LLM_URL}/v1/messages`, {
        method: 'POST',
        body: JSON.stringify({ messages: [{ role: 'user', content: `SCENARIO:${p.hold}` }] }),
      });
    const i = cursor.i + 1;
    return { cursor: { i }, done: i >= p.steps, progress: { done: i, total: p.steps, unit: 'steps' } };
  },
};
registerJobKinds([slowKind as unknown as JobKind<unknown, unknown>]);

describe('open jobs a person may have', { timeout: 60_000 }, () => {
  it(`refuses a member's job past ${OPEN_JOBS_PER_PERSON} open ones with 429 too_many_jobs, and takes one again once one ends`, async () => {
    const owner = await newIdentity({ role: 'owner' });
    const member = await newIdentity({ team: owner.team, role: 'member' });
    const ids = await idsOf(member);
    const keys: string[] = [];
    for (let i = 0; i <= OPEN_JOBS_PER_PERSON; i++) {
      const key = `github.com/${member.user}/${fresh('p')}`;
      const projectId = await seedProject(ids, key, 'private');
      await seedObservation(ids, projectId, await seedSession(ids, projectId, fresh('s')), { title: `note ${i}` });
      keys.push(key);
    }
    const forget = (key: string) =>
      call('/api/forget', { token: member.token, json: { kind: 'project', project: key, confirm: 1 } });
    // A job of the server's holds the lane in its first step, so the member's jobs stay queued behind it.
    const busy = fresh('busy');
    await script(busy, [], 0, { hold: true });
    const blocker = await startJob(env, slowKind, ids.teamId, { tag: busy, steps: 1, hold: busy });
    const running = runJob(ids.teamId, blocker.id);
    await arrived(busy, 1);
    const jobs: string[] = [];
    for (const key of keys.slice(0, OPEN_JOBS_PER_PERSON)) {
      const res = await forget(key);
      expect(res.status).toBe(202);
      jobs.push(((await res.json()) as { job: WireJob }).job.id);
    }
    const refused = await forget(keys[OPEN_JOBS_PER_PERSON]!);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('too_many_jobs');
    // Nothing was started for it.
    const open = (await lane(ids.teamId).list(200, 'forget-project')).filter((j) => j.actorUserId === ids.userId);
    expect(open.map((j) => j.id).sort()).toEqual([...jobs].sort());

    await release(busy);
    expect((await running).status).toBe('done');
    expect((await runJob(ids.teamId, jobs[0]!)).status).toBe('done');
    expect((await forget(keys[OPEN_JOBS_PER_PERSON]!)).status).toBe(202);
  });

  it("runs an admin's job within a step of each of the member's open jobs, however many the member tries to start", async () => {
    const owner = await newIdentity({ role: 'owner' });
    const { teamId, userId: ownerId } = await idsOf(owner);
    const member = await newIdentity({ team: owner.team, role: 'member' });
    const { userId: memberId } = await idsOf(member);
    // The lane is held busy while the member starts, so none of the member's jobs ends (and frees a place) meanwhile.
    const busy = fresh('busy');
    await script(busy, [], 0, { hold: true });
    const blocker = await startJob(env, slowKind, teamId, { tag: busy, steps: 1, hold: busy });
    const running = runJob(teamId, blocker.id);
    await arrived(busy, 1);
    const mine = fresh('member');
    let refused = 0;
    for (let i = 0; i < 40; i++) {
      try {
        await startJob(
          env,
          slowKind,
          teamId,
          { tag: `${mine}-${i}`, steps: 2 },
          { userId: memberId, handle: member.user },
        );
      } catch (err) {
        expect(err).toBeInstanceOf(AppError);
        expect((err as AppError).code).toBe('too_many_jobs');
        refused++;
      }
    }
    expect(refused).toBe(40 - OPEN_JOBS_PER_PERSON);
    const theirs = fresh('admin');
    const job = await startJob(
      env,
      slowKind,
      teamId,
      { tag: theirs, steps: 1 },
      { userId: ownerId, handle: owner.user },
    );
    const from = order.length;
    await release(busy);
    expect((await running).status).toBe('done');
    expect((await runJob(teamId, job.id)).status).toBe('done');
    // Before: 40 member jobs queued ahead of it, so 40 steps of theirs ran first.
    const ran = order.slice(from).filter((s) => !s.startsWith(`${busy}:`));
    expect(ran.indexOf(`${theirs}:0`)).toBeGreaterThanOrEqual(0);
    expect(ran.indexOf(`${theirs}:0`)).toBeLessThanOrEqual(OPEN_JOBS_PER_PERSON);
  });
});
