// GET /api/admin/health (a team's admins), GET /api/admin/teams/health (the operator) and GET /api/observer/state
// (every device): what each shows, who may read it, and the daily cron's record of its parts.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { maintenanceRunList } from '../../../src/db/maintenance';
import type { OperatorHealthJson, TeamHealthJson } from '../../../src/health/types';
import { runDailyMaintenance } from '../../../src/maintenance/daily';
import { storePrompt } from '../../../src/store/sessions';
import { ADMIN_SECRET, call, fresh, newIdentity } from '../support/http';
import { runOpenJobs } from '../support/jobs';
import { seedWorld } from '../support/seed';

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

    await runDailyMaintenance(env, now);
    await runOpenJobs(w.ids.teamId, 'retention-sweep');
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
    expect(h.maintenance.map((m) => [m.job, m.ok])).toEqual(
      expect.arrayContaining([
        ['fts_check', true],
        ['retention', true],
      ]),
    );
    expect(h.maintenance.find((m) => m.job === 'retention')).toMatchObject({
      started_at: now,
      finished_at: expect.any(Number),
      error: null,
    });
    expect(h.shard.binding).toBe('DB');
    expect(h.shard.limit_bytes).toBe(10_000_000_000);
    expect(h.shard.size_bytes).toBeGreaterThan(100_000);
    expect(h.shard.used).toBeCloseTo(h.shard.size_bytes! / 1e10, 12);
  });

  it('records a failing cron part with its error and still runs the parts after it', async () => {
    const now = Date.now();
    const seen: string[] = [];
    await runDailyMaintenance(env, now, [
      [
        'backup',
        async () => {
          throw new Error('bucket unreachable');
        },
      ],
      [
        'retention',
        async () => {
          seen.push('retention');
          return { teams: 0 };
        },
      ],
    ]);
    expect(seen).toEqual(['retention']);
    const runs = await maintenanceRunList(env.DB);
    expect(runs.find((r) => r.job === 'backup')).toMatchObject({
      ok: false,
      error: 'bucket unreachable',
      startedAt: now,
    });
    expect(runs.find((r) => r.job === 'retention')).toMatchObject({ ok: true, detail: { teams: 0 } });
  });

  it('answers every device its observer state, admins alone the team health, and the operator every team', async () => {
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
    const op = await call('/api/admin/teams/health', { token: ADMIN_SECRET });
    expect(op.status).toBe(200);
    const all = (await op.json()) as OperatorHealthJson;
    expect(all.teams.find((t) => t.team === owner.team)?.observer.state).toBe('ok');
    expect(all.shards.map((s) => s.binding)).toEqual(['DB', 'DB_1']);
    for (const s of all.shards) expect(s.size_bytes).toBeGreaterThan(0);
    expect(all.shards.reduce((n, s) => n + s.teams, 0)).toBe(all.teams.length);
  });
});
