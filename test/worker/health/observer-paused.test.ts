// An observer whose key is refused for a while: health says `failing` with the provider's code, the next
// SessionStart context and `cairn status` (GET /api/observer/state) say memory is paused, and once the key
// works again every event is stored by the next probe, due within 5 minutes, or at once on an admin's retry.
// Time is driven, not waited for: "the next try is due" is the team's back-off lifted (clearBackoff), and the
// sessions' alarms are fired by the test.
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { PROBE_MAX_MS } from '../../../src/slots/observer-health';
import {
  countRows,
  initEvent,
  runAlarmNow,
  script,
  send,
  sessionStub,
  settled,
  status,
  teamStub,
  toolEvent,
  waitFor,
  type FakeResponse,
} from '../pipeline/support';
import { call, fresh, newIdentity } from '../support/http';
import { idsOf } from '../support/seed';

const REFUSED: FakeResponse = { status: 401, error: { type: 'authentication_error', message: 'invalid x-api-key' } };
const PROJECT = 'github.com/acme/widgets';

async function json<T>(path: string, token: string, init: RequestInit = {}): Promise<T> {
  const res = await call(path, { ...init, token });
  expect(res.status, `${path}: ${res.status}`).toBe(200);
  return (await res.json()) as T;
}

const alarmOf = (teamId: number, sid: string) =>
  runInDurableObject(sessionStub(teamId, sid), (_i, state) => state.storage.getAlarm());

/** Two sessions of one team with work waiting, the observer refusing the key. */
async function pausedTeam() {
  const id = await newIdentity();
  const { teamId } = await idsOf(id);
  const scenario = fresh('key');
  await script(
    scenario,
    Array.from({ length: 30 }, () => REFUSED),
  );
  const a = fresh('s');
  const b = fresh('s');
  await send(id.token, 'init', initEvent(a, 'Ship the release'));
  await send(id.token, 'observations', toolEvent(a, `SCENARIO:${scenario} build`));
  await send(id.token, 'observations', toolEvent(a, 'deploy'));
  await waitFor(id.token, a, (s) => s.backoff_until !== null && s.in_flight === 0);
  await send(id.token, 'init', initEvent(b, 'Fix the flaky test'));
  await send(id.token, 'observations', toolEvent(b, `SCENARIO:${scenario} rerun`));
  // B's turn asks the team for a slot and is refused: it waits, and its backlog is on record.
  await runDurableObjectAlarm(sessionStub(teamId, b));
  expect(await status(id.token, b)).toMatchObject({ pending: 1, in_flight: 0, observations_stored: 0 });
  return { id, teamId, scenario, a, b };
}

describe('an observer whose key is refused', { timeout: 60_000 }, () => {
  it('is shown as failing with its code in health, the context index and the state every device reads, and all events are stored by the next probe once the key works', async () => {
    const { id, teamId, scenario, a, b } = await pausedTeam();

    const health = await json<{
      observer: Record<string, unknown>;
      events: Record<string, unknown>;
      dead_letters: unknown;
    }>('/api/admin/health', id.token);
    expect(health.observer).toMatchObject({
      state: 'failing',
      kind: 'auth',
      code: '401 authentication_error',
      provider: 'anthropic',
    });
    expect(health.observer.since).toEqual(expect.any(Number));
    expect(health.events).toMatchObject({ pending: 3, sessions: 2 });
    expect(health.dead_letters).toEqual({ retryable: 0, retired: 0 });

    const context = await (
      await call(`/api/context?project=${encodeURIComponent(PROJECT)}`, { token: id.token })
    ).text();
    expect(context).toContain('Memory is paused since');
    expect(context).toContain("the observer's API key was refused (401 authentication_error)");
    expect(context).toContain('cairn admin observer retry');
    expect(context).toContain('3 events are waiting and nothing is lost');
    const state = await json<Record<string, unknown>>('/api/observer/state', id.token);
    expect(state).toMatchObject({ state: 'failing', code: '401 authentication_error', pending: 3 });
    expect(state.notice).toBe(
      context
        .split('\n')
        .find((l) => l.startsWith('Note: '))
        ?.slice('Note: '.length),
    );

    // A while passes with the key still refused: each probe is one call, the next never more than 4 minutes on.
    const before = (await fetch(`${(await import('cloudflare:workers')).env.FAKE_LLM_URL}/__scenario/${scenario}`).then(
      (r) => r.json(),
    )) as { requests: unknown[] };
    for (let i = 0; i < 4; i++) {
      expect(await runAlarmNow(teamId, a)).toBe(true);
      await waitFor(id.token, a, (s) => s.in_flight === 0 && s.backoff_until !== null);
      const h = await teamStub(teamId).health();
      expect(h.state).toBe('failing');
      expect(h.retry_at! - Date.now()).toBeLessThanOrEqual(PROBE_MAX_MS);
    }
    const during = (await fetch(`${(await import('cloudflare:workers')).env.FAKE_LLM_URL}/__scenario/${scenario}`).then(
      (r) => r.json(),
    )) as { requests: unknown[] };
    expect(during.requests.length - before.requests.length).toBe(4);

    // The key works again. Nobody acts: the next probe is already planned within 5 minutes, and so is A's alarm.
    await script(scenario, []);
    const fixedAt = Date.now();
    const planned = await teamStub(teamId).health();
    expect(planned.retry_at! - fixedAt).toBeLessThanOrEqual(PROBE_MAX_MS);
    expect(PROBE_MAX_MS).toBeLessThan(5 * 60_000);
    expect((await alarmOf(teamId, a))! - fixedAt).toBeLessThanOrEqual(PROBE_MAX_MS);
    // That time comes: A's turn is the probe, goes through, and wakes B, which waited for the team.
    const bWaitedUntil = await alarmOf(teamId, b);
    expect(await runAlarmNow(teamId, a)).toBe(true);
    await waitFor(id.token, a, (s) => settled(s) && s.observations_stored === 2);
    expect((await alarmOf(teamId, b)) ?? 0).toBeLessThan(bWaitedUntil ?? Number.POSITIVE_INFINITY);
    await waitFor(id.token, b, (s) => settled(s) && s.observations_stored === 1);
    expect(await countRows(a)).toEqual({ total: 2, distinct: 2 });
    expect(await countRows(b)).toEqual({ total: 1, distinct: 1 });

    const after = await json<{ observer: Record<string, unknown>; events: Record<string, unknown> }>(
      '/api/admin/health',
      id.token,
    );
    expect(after.observer).toMatchObject({ state: 'ok', code: null, notice: null });
    expect(after.events).toMatchObject({ pending: 0 });
    expect(
      await (await call(`/api/context?project=${encodeURIComponent(PROJECT)}`, { token: id.token })).text(),
    ).not.toContain('Memory is');
  });

  it('resumes at once when an admin asks (cairn admin observer retry), and a member may not ask', async () => {
    const { id, scenario, a, b } = await pausedTeam();
    await script(scenario, []);
    const member = await newIdentity({ team: id.team, user: fresh('member'), role: 'member' });
    const refused = await call('/api/admin/observer/retry', { method: 'POST', token: member.token });
    expect(refused.status).toBe(403);

    const retry = await json<{ woken: number; observer: { state: string } }>('/api/admin/observer/retry', id.token, {
      method: 'POST',
    });
    expect(retry.woken).toBe(2);
    // No back-off to lift and no waiting for the next probe: the woken sessions' own alarms run their turns.
    await waitFor(id.token, a, (s) => settled(s) && s.observations_stored === 2);
    await waitFor(id.token, b, (s) => settled(s) && s.observations_stored === 1);
    expect((await json<{ observer: { state: string } }>('/api/admin/health', id.token)).observer.state).toBe('ok');
    const audit = await json<{ entries: { action: string; detail: unknown }[] }>(
      '/api/admin/audit?action=observer',
      id.token,
    );
    expect(audit.entries[0]).toMatchObject({ action: 'observer.retry', detail: { woken: 2 } });
  });
});
