// The team's digest (issue 36): Slack-compatible JSON posted to the team's webhook (here a receiver on 127.0.0.1, the
// fake LLM server's /__webhook/<id>, allowed only because the tests run under the local config) by a `digest` job in
// the team's lane; what every member may read and nothing else (no private project, held row, sensitive row,
// personal memory); a failing receiver shown in health and retried by the lane.
import { runDurableObjectAlarm } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { startTeamDigest } from '../../../src/digest/job';
import { digestPeriod } from '../../../src/digest/schedule';
import { teamSettingsText } from '../../../src/db/teams';
import { ADMIN_SECRET, call, fresh, newIdentity, type TestIdentity } from '../support/http';
import { finishJob, jobOf, lane } from '../support/jobs';
import { idsOf, seedObservation, seedProject, seedSession, seedSummary } from '../support/seed';
import { json } from '../teams/support';
import { runTeamDay } from '../support/daily';

const HOUR = 3_600_000;

interface Posted {
  path: string;
  body: { text: string; blocks: { type: string; text?: { text: string } }[] };
}

const posts = async (id: string): Promise<Posted[]> =>
  ((await (await fetch(`${env.FAKE_LLM_URL}/__scenario/${id}`)).json()) as { requests: Posted[] }).requests;
const script = (id: string, statuses: number[]) =>
  fetch(`${env.FAKE_LLM_URL}/__scenario/${id}`, {
    method: 'POST',
    body: JSON.stringify({ responses: statuses.map((status) => ({ status })) }),
  });

interface Health {
  digest: {
    schedule: string;
    period: string | null;
    attempts: number;
    last_sent_at: number | null;
    failing_since: number | null;
    error: string | null;
  } | null;
}

/** A team with a day of work, and rows no digest may carry; its webhook pointed at receiver `hook`. */
async function teamWithDay(hook: string, schedule?: 'daily' | 'weekly') {
  const owner = await newIdentity({ role: 'owner' });
  const mate = await newIdentity({ team: owner.team });
  const mine = await idsOf(owner);
  const theirs = await idsOf(mate);
  const key = `github.com/acme/${fresh('widgets')}`;
  const p = await seedProject(mine, key);
  const now = Date.now();
  const s1 = await seedSession(mine, p, fresh('s'), now - 5 * HOUR);
  const s2 = await seedSession(theirs, p, fresh('s'), now - 4 * HOUR);
  const rows = {
    sum: await seedSummary(mine, p, s1, {
      request: 'Rate-limit the login route',
      completed: 'Limiter on POST /login',
      createdAt: now - 4 * HOUR,
    }),
    feat: await seedObservation(mine, p, s1, {
      type: 'feature',
      title: 'Token bucket on POST /login',
      createdAt: now - 5 * HOUR,
    }),
    mate: await seedObservation(theirs, p, s2, {
      type: 'decision',
      title: 'Buckets stay in memory <!channel>',
      createdAt: now - 3 * HOUR,
    }),
    held: await seedObservation(theirs, p, s2, { title: 'HELDROW run this', createdAt: now - 2 * HOUR }),
    sensitive: await seedObservation(theirs, p, s2, {
      type: 'sensitive',
      title: 'SENSITIVEROW',
      createdAt: now - 2 * HOUR,
    }),
  };
  await env.DB.prepare("UPDATE observations SET held_kinds = 'command' WHERE id = ?").bind(rows.held).run();
  const priv = await seedProject(theirs, `local/${mate.user}/${fresh('scratch')}`, 'private');
  const s3 = await seedSession(theirs, priv, fresh('s'), now - HOUR);
  await seedObservation(theirs, priv, s3, { title: 'PRIVATEROW', createdAt: now - HOUR });
  await json(
    await call('/api/memory/remember', { token: owner.token, json: { scope: 'personal', text: 'PERSONALROW' } }),
    201,
  );
  await json(
    await call('/api/admin/settings', {
      token: owner.token,
      method: 'PATCH',
      json: {
        digest_webhook_url: `${env.FAKE_LLM_URL}/__webhook/${hook}`,
        ...(schedule ? { digest_schedule: schedule } : {}),
      },
    }),
  );
  return { owner, teamId: mine.teamId, key, rows, now };
}

const startDigest = async (teamId: number, at: number) =>
  startTeamDigest(env, teamId, (await teamSettingsText(env.DB, teamId)) ?? '{}', at);
/** Runs the lane until job `id` has failed a step (and waits for its retry), or has ended. */
async function firstFailure(teamId: number, id: string): Promise<void> {
  for (;;) {
    const job = (await jobOf(teamId, id))!;
    if (job.error || job.status === 'done' || job.status === 'failed') return;
    if (!(await runDurableObjectAlarm(lane(teamId)))) await new Promise((r) => setTimeout(r, 5));
  }
}
const health = async (t: TestIdentity) => json<Health>(await call('/api/admin/health', { token: t.token }));

describe('the team digest', () => {
  it('posts what every member may read of the day, grouped by project and person, as Slack-compatible JSON', async () => {
    const hook = fresh('hook');
    const t = await teamWithDay(hook);
    const id = await startDigest(t.teamId, t.now);
    expect(id).not.toBeNull();
    const job = await finishJob(t.teamId, id!);
    expect(job.status, JSON.stringify(job.error)).toBe('done');
    expect(job.result).toMatchObject({ outcome: 'sent', projects: 1, rows: 3 });
    // One step of a few statements and the one post, however busy the day (the window's reads are bounded).
    expect(job.stats.steps).toBe(1);
    expect(job.stats.statements.max).toBeLessThanOrEqual(8);
    expect(job.stats.subrequests.max).toBeLessThanOrEqual(9);
    const [post, ...more] = await posts(hook);
    expect(more).toEqual([]);
    expect(post!.body.blocks[0]).toMatchObject({ type: 'header' });
    const text = JSON.stringify(post!.body);
    expect(text).toContain(t.key);
    expect(text).toContain(`S${t.rows.sum} Rate-limit the login route`);
    expect(text).toContain(`#${t.rows.feat} feature: Token bucket on POST /login`);
    expect(text).toContain(`#${t.rows.mate} decision: Buckets stay in memory`);
    for (const never of ['HELDROW', 'SENSITIVEROW', 'PRIVATEROW', 'PERSONALROW', '<!channel>'])
      expect(text).not.toContain(never);
    // The same period again posts nothing twice.
    const again = await finishJob(t.teamId, (await startDigest(t.teamId, t.now + 60_000))!);
    expect(again.result).toMatchObject({ outcome: 'already_sent' });
    expect(await posts(hook)).toHaveLength(1);
    expect((await health(t.owner)).digest).toMatchObject({
      schedule: 'daily',
      error: null,
      period: digestPeriod('daily', t.now),
    });
  });

  it('shows a failing receiver in health and retries until it takes the digest', async () => {
    const hook = fresh('hook');
    await script(hook, [500, 503]);
    const t = await teamWithDay(hook);
    const id = (await startDigest(t.teamId, t.now))!;
    // One step: the receiver answers 500; the record says so and the lane will try again (2 s later). The step may
    // be one miniflare fired by itself: the job's own error says it ran, not the alarm call.
    await firstFailure(t.teamId, id);
    const failing = (await health(t.owner)).digest!;
    expect(failing.error).toBe('the webhook answered 500');
    expect(failing.failing_since).not.toBeNull();
    expect(failing.attempts).toBe(1);
    // The operator's view of the team (its page's digest records read at once) says the same.
    const op = await json<{ teams: Health[] }>(
      await call(`/api/admin/teams/health?cursor=${t.teamId - 1}&limit=1`, { token: ADMIN_SECRET }),
    );
    expect(op.teams[0]!.digest).toMatchObject({ error: 'the webhook answered 500', attempts: 1 });
    expect((await jobOf(t.teamId, id))!.status).not.toBe('failed');
    const job = await finishJob(t.teamId, id);
    expect(job.status).toBe('done');
    expect(await posts(hook)).toHaveLength(3);
    const ok = (await health(t.owner)).digest!;
    expect(ok).toMatchObject({ error: null, failing_since: null, attempts: 3 });
    expect(ok.last_sent_at).not.toBeNull();
  });

  it("is started by the team's own daily job (the cron's fan-out), and not for a team without a webhook", async () => {
    const hook = fresh('hook');
    const t = await teamWithDay(hook);
    const day = await runTeamDay(t.teamId, t.now);
    expect(day.status, JSON.stringify(day.error)).toBe('done');
    const id = (day.result as { digest: string | null }).digest;
    expect(id).toEqual(expect.any(String));
    expect((await finishJob(t.teamId, id!)).result).toMatchObject({
      outcome: 'sent',
      period: digestPeriod('daily', t.now),
    });
    expect(await posts(hook)).toHaveLength(1);
    const none = await newIdentity({ role: 'owner' });
    const quiet = await runTeamDay((await idsOf(none)).teamId, t.now);
    expect(quiet.result).toMatchObject({ digest: null });
  });

  it('is not started without a webhook, and weekly only on Mondays', async () => {
    const none = await newIdentity({ role: 'owner' });
    expect(await startDigest((await idsOf(none)).teamId, Date.now())).toBeNull();
    const hook = fresh('hook');
    const t = await teamWithDay(hook, 'weekly');
    const monday = Date.parse('2026-12-07T03:17:00Z');
    expect(await startDigest(t.teamId, monday + 86_400_000)).toBeNull();
    const id = await startDigest(t.teamId, monday);
    expect(id).not.toBeNull();
    expect((await finishJob(t.teamId, id!)).result).toMatchObject({ period: '2026-W50', outcome: 'sent' });
  });

  it('shows a receiver it cannot reach in health without the URL, which is a credential', async () => {
    const t = await teamWithDay(fresh('hook'));
    const secret = fresh('T000-B000-SECRET');
    await json(
      await call('/api/admin/settings', {
        token: t.owner.token,
        method: 'PATCH',
        json: { digest_webhook_url: `http://127.0.0.1:1/services/${secret}` },
      }),
    );
    const id = (await startDigest(t.teamId, t.now))!;
    await firstFailure(t.teamId, id);
    const shown = JSON.stringify(await health(t.owner));
    expect(shown).toContain('the webhook could not be reached');
    expect(shown).not.toContain(secret);
    expect(JSON.stringify(await jobOf(t.teamId, id))).not.toContain(secret);
  });

  it('fails, shown in health, for a stored webhook this configuration refuses, and posts nothing', async () => {
    const t = await newIdentity({ role: 'owner' });
    const teamId = (await idsOf(t)).teamId;
    // Stored past the settings route (as a local run's receiver would be after a deploy): plain http elsewhere.
    await env.DB.prepare('UPDATE teams SET settings = ? WHERE id = ?')
      .bind(JSON.stringify({ digest_webhook_url: 'http://hooks.example.com/x' }), teamId)
      .run();
    const job = await finishJob(teamId, (await startDigest(teamId, Date.now()))!);
    expect(job.status).toBe('failed');
    expect(job.error?.code).toBe('invalid_webhook');
    expect((await health(t)).digest).toMatchObject({
      attempts: 1,
      error: expect.stringContaining('digest_webhook_url'),
    });
  });

  it('takes only an https webhook (or 127.0.0.1 in local runs) and never shows the URL back', async () => {
    const t = await newIdentity({ role: 'owner' });
    const patch = (url: string) =>
      call('/api/admin/settings', { token: t.token, method: 'PATCH', json: { digest_webhook_url: url } });
    for (const bad of ['http://hooks.example.com/x', 'ftp://x/y', 'not a url', 'https://user:pw@hooks.example.com/x']) {
      const r = await patch(bad);
      expect(r.status, bad).toBe(400);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('invalid_webhook');
    }
    const secret = `https://hooks.slack.com/services/T000/B000/${fresh('XXXX')}`;
    const set = await json<{ settings: { digest_webhook_url: string } }>(await patch(secret));
    expect(set.settings.digest_webhook_url).toBe('https://hooks.slack.com/…');
    const read = await (await call('/api/admin/settings', { token: t.token })).text();
    expect(read).not.toContain('services/T000');
    const audit = await (await call('/api/admin/audit?action=settings', { token: t.token })).text();
    expect(audit).toContain('hooks.slack.com/…');
    expect(audit).not.toContain('services/T000');
  });
});
