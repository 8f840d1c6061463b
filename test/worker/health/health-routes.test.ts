// GET /api/admin/health (a team's admins), GET /api/admin/teams/health (the operator) and GET /api/observer/state
// (every device): what each shows, who may read it, and the daily cron's record of its parts.
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import app from '../../../src/app';
import { metered, watchInvocations, type Usage } from '../../../src/db/meter';
import { maintenanceRunList, runProgress, runStarted } from '../../../src/db/maintenance';
import type { OperatorHealthJson, TeamHealthJson } from '../../../src/health/types';
import { runServerParts } from '../../../src/maintenance/dispatch-job';
import { startTeamRetention } from '../../../src/retention/sweep';
import { storePrompt } from '../../../src/store/sessions';
import { countingEnv } from '../support/counting-env';
import { ADMIN_SECRET, BASE, call, fresh, newIdentity } from '../support/http';
import { runOpenJobs } from '../support/jobs';
import { seedManyTeams } from '../support/many-teams';
import { idsOf, seedWorld } from '../support/seed';

const DAY = 86_400_000;

describe('health', () => {
  it('shows the team its observer, backlog, dead letters, budget, retention, the cron and its database against 10 GB', async () => {
    const w = await seedWorld();
    const now = Date.now();
    await w.add({ title: 'An old note', createdAt: now - 40 * DAY });
    await storePrompt(env.DB, {
      teamId: w.ids.teamId,
      projectId: w.projectId,
      sessionDbId: w.sessionId,
      promptNumber: 1,
      text: 'an old ask',
      authorUserId: w.ids.userId,
      createdAt: now - 40 * DAY,
    });
    expect(
      (
        await call('/api/admin/settings', {
          token: w.id.token,
          method: 'PATCH',
          json: { retention_days: 30, observer_budget_tokens_per_day: 1000 },
        })
      ).status,
    ).toBe(200);

    // The team's part of the daily run (the dispatcher starts it in every team's lane: test/worker/maintenance/) and
    // the dispatcher's record, as it stands a page of teams in. Neither walks the other teams this runtime holds.
    expect(await startTeamRetention(env, w.ids.teamId, JSON.stringify({ retention_days: 30 }), now)).not.toBeNull();
    await runOpenJobs(w.ids.teamId, 'retention-sweep');
    await runStarted(env.DB, 'daily', now);
    await runProgress(env.DB, 'daily', now, { job: 'job_test', teams: 25 });
    const res = await call('/api/admin/health', { token: w.id.token });
    expect(res.status).toBe(200);
    const h = (await res.json()) as TeamHealthJson;
    expect(h.team).toBe(w.id.team);
    expect(h.observer).toMatchObject({ state: 'ok', provider: 'anthropic', code: null, notice: null });
    expect(h.events).toEqual({ sessions: 0, pending: 0, oldest_pending_at: null, oldest_age_ms: null });
    expect(h.dead_letters).toEqual({ retryable: 0, retired: 0 });
    expect(h.budget).toMatchObject({ per_day: 1000, exhausted: null });
    expect(h.retention.days).toBe(30);
    expect(h.retention.last_sweep).toMatchObject({ at: now, detail: { days: 30, observations: 1, prompts: 1 } });
    expect(h.maintenance.find((m) => m.job === 'daily')).toEqual({
      job: 'daily',
      started_at: now,
      finished_at: null,
      ok: null,
      error: null,
      detail: { job: 'job_test', teams: 25 },
    });
    expect(h.shard.binding).toBe('DB');
    expect(h.shard.limit_bytes).toBe(10_000_000_000);
    expect(h.shard.size_bytes).toBeGreaterThan(100_000);
    expect(h.shard.used).toBeCloseTo(h.shard.size_bytes! / 1e10, 12);
  });

  it('records a failing server-wide part of the daily run with its error and still runs the parts after it', async () => {
    const now = Date.now();
    const seen: string[] = [];
    await runServerParts(env, now, [
      [
        'fts_check',
        async () => {
          throw new Error('shard unreachable');
        },
      ],
      [
        'upgrade_check',
        async () => {
          seen.push('upgrade_check');
          return { job: 'job_test' };
        },
      ],
    ]);
    expect(seen).toEqual(['upgrade_check']);
    const runs = await maintenanceRunList(env.DB);
    expect(runs.find((r) => r.job === 'fts_check')).toMatchObject({
      ok: false,
      error: 'shard unreachable',
      startedAt: now,
    });
    expect(runs.find((r) => r.job === 'upgrade_check')).toMatchObject({ ok: true, detail: { job: 'job_test' } });
  });

  it('answers every device its observer state, admins alone the team health, and the operator every team, a page at a time', async () => {
    const owner = await newIdentity();
    const member = await newIdentity({ team: owner.team, user: fresh('member'), role: 'member' });
    const state = await call('/api/observer/state', { token: member.token });
    expect(state.status).toBe(200);
    expect(await state.json()).toEqual({
      state: 'ok',
      kind: null,
      code: null,
      since: null,
      retry_at: null,
      pending: 0,
      oldest_pending_at: null,
      notice: null,
    });
    expect((await call('/api/admin/health', { token: member.token })).status).toBe(403);

    expect((await call('/api/admin/teams/health')).status).toBe(401);
    expect((await call('/api/admin/teams/health', { token: owner.token })).status).toBe(401);
    const { teamId } = await idsOf(owner);
    await newIdentity(); // a team after it: the page of one says where the next begins
    const op = await call(`/api/admin/teams/health?cursor=${teamId - 1}&limit=1`, { token: ADMIN_SECRET });
    expect(op.status).toBe(200);
    const page = (await op.json()) as OperatorHealthJson;
    expect(page.teams.map((t) => [t.team, t.observer.state])).toEqual([[owner.team, 'ok']]);
    expect(page.next_cursor).toBe(String(teamId));
    expect(page.shards.map((s) => s.binding)).toEqual(['DB', 'DB_1']);
    for (const s of page.shards) expect(s.size_bytes).toBeGreaterThan(0);
    const teams = await env.DB.prepare('SELECT COUNT(*) AS n FROM teams').first<{ n: number }>();
    expect(page.shards.reduce((n, s) => n + s.teams, 0)).toBe(teams!.n);
    for (const bad of ['cursor=-1', 'cursor=abc', 'limit=0', 'limit=51'])
      expect((await call(`/api/admin/teams/health?${bad}`, { token: ADMIN_SECRET })).status).toBe(400);
  });
});

/** One operator health request through the app under the meter, its DO calls counted where they leave. */
async function operatorPage(query: string): Promise<{ body: OperatorHealthJson; statements: number; calls: number }> {
  const { env: counted, calls } = countingEnv();
  const seen: Usage[] = [];
  const stop = watchInvocations((u) => seen.push(u));
  const ctx = createExecutionContext();
  const res = await metered(counted, 'fetch GET /api/admin/teams/health', () =>
    app.fetch(
      new Request(`${BASE}/api/admin/teams/health?${query}`, { headers: { authorization: `Bearer ${ADMIN_SECRET}` } }),
      counted,
      ctx,
    ),
  );
  await waitOnExecutionContext(ctx);
  stop();
  expect(res.status).toBe(200);
  return { body: (await res.json()) as OperatorHealthJson, statements: seen[0]!.statements, calls: calls.total() };
}

describe("the operator's health", () => {
  it('pages through the teams: a page costs the same statements and Durable Object calls with 60 more teams', async () => {
    const a = await newIdentity();
    const b = await newIdentity();
    const c = await newIdentity();
    const first = (await idsOf(a)).teamId;
    const cursor = `cursor=${first - 1}&limit=2`;
    const before = await operatorPage(cursor);
    expect(before.body.teams.map((t) => t.team)).toEqual([a.team, b.team]);
    const next = await operatorPage(`cursor=${before.body.next_cursor}&limit=2`);
    expect(next.body.teams[0]?.team).toBe(c.team);

    await seedManyTeams(fresh('op'), 60); // few: the runtime's later files share this database
    const after = await operatorPage(cursor);
    expect(after.body.teams.map((t) => t.team)).toEqual([a.team, b.team]);
    // Two teams' views (a TeamDO call and five reads each) and the page's own reads, whatever the server holds.
    expect({ statements: after.statements, calls: after.calls }).toEqual({
      statements: before.statements,
      calls: before.calls,
    });
    expect(after.calls).toBe(2);
    const total = await env.DB.prepare('SELECT COUNT(*) AS n FROM teams').first<{ n: number }>();
    expect(after.body.shards.reduce((n, s) => n + s.teams, 0)).toBe(total!.n);
  });
});
