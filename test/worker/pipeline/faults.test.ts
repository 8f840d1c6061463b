// Observer faults: back-off without losing events, prose/broken/empty replies confirmed once, crashes between
// claim and confirm replayed into D1 exactly once, and a retry budget that ends in a visible dead letter.
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, fresh, newIdentity } from '../support/http';
import { idsOf } from '../support/seed';
import {
  countRows,
  initEvent,
  insideSession,
  recorded,
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
} from './support';

async function startSession(faults: FakeResponse[], events = 2) {
  const id = await newIdentity();
  const { teamId } = await idsOf(id);
  const sid = fresh('s');
  const scenario = fresh('fault');
  await script(scenario, faults);
  await send(id.token, 'init', initEvent(sid, 'Ship the release'));
  for (let i = 0; i < events; i++)
    await send(id.token, 'observations', toolEvent(sid, i === 0 ? `SCENARIO:${scenario} deploy-${i}` : `deploy-${i}`));
  return { id, teamId, sid, scenario };
}

const pendingAttempts = (teamId: number, sid: string) =>
  runInDurableObject(sessionStub(teamId, sid), (_i, state) =>
    state.storage.sql
      .exec<{ attempts: number }>('SELECT attempts FROM pending')
      .toArray()
      .map((r) => r.attempts),
  );

describe('observer faults', { timeout: 30_000 }, () => {
  const backoffCases: [string, FakeResponse, number, number][] = [
    [
      'a rate limit with retry-after',
      { status: 429, headers: { 'retry-after': '7' }, error: { type: 'rate_limit_error', message: 'slow down' } },
      6_000,
      8_000,
    ],
    ['an overloaded observer', { status: 529, error: { type: 'overloaded_error', message: 'busy' } }, 4_000, 6_000],
    // Failing kinds wait for the team's next probe (slots/observer-health.ts): the first one 30 s away.
    [
      'a refused key',
      { status: 401, error: { type: 'authentication_error', message: 'invalid x-api-key' } },
      29_000,
      31_000,
    ],
    [
      'an unknown model name',
      { status: 404, error: { type: 'not_found_error', message: 'model: claude-typo' } },
      29_000,
      31_000,
    ],
    [
      'a spend-limit 429',
      {
        status: 429,
        error: {
          type: 'rate_limit_error',
          message: 'spend limit reached',
          details: { error_code: 'enforced_spend_limit_reached' },
        },
      },
      29_000,
      31_000,
    ],
  ];

  for (const [what, fault, min, max] of backoffCases) {
    it(`backs off after ${what}, keeps the events without spending their retries, and stores them once it clears`, async () => {
      const { id, teamId, sid, scenario } = await startSession([fault]);
      const during = await waitFor(id.token, sid, (s) => s.backoff_until !== null && s.in_flight === 0);
      const wait = during.backoff_until! - Date.now();
      expect(wait).toBeGreaterThan(min - 1_000);
      expect(wait).toBeLessThan(max);
      expect(during.pending).toBe(2);
      expect(during.dead_letters).toEqual([]);
      expect(await pendingAttempts(teamId, sid)).toEqual([0, 0]);
      // The whole team waits too: the account's quota is shared.
      expect((await teamStub(teamId).backoffUntil()).until).toBeGreaterThan(Date.now() + min - 1_000);

      expect(await runAlarmNow(teamId, sid)).toBe(true);
      await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored === 2);
      expect(await countRows(sid)).toEqual({ total: 2, distinct: 2 });
      expect((await recorded(scenario)).length).toBe(2);
    });
  }

  const dropCases: [string, string][] = [
    ['prose', 'I had a look at what the agent did and it all seems fine to me.'],
    ['broken XML', '<observation><type>discovery</type><title>Half an answer'],
    ['an empty reply', ''],
  ];

  for (const [what, text] of dropCases) {
    it(`confirms the batch without retrying when the observer answers with ${what}`, async () => {
      const { id, teamId, sid, scenario } = await startSession([{ text }], 1);
      const done = await waitFor(id.token, sid, (s) => settled(s) && s.turns >= 1);
      expect(done.observations_stored).toBe(0);
      expect(done.backoff_until).toBeNull();
      expect(done.dead_letters).toEqual([]);
      // Whatever alarm is still scheduled runs now: it must not ask the observer a second time.
      await runDurableObjectAlarm(sessionStub(teamId, sid));
      expect((await recorded(scenario)).length).toBe(1);
      // The session goes on: the next event is observed normally.
      await send(id.token, 'observations', toolEvent(sid, 'after the odd reply'));
      await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored === 1);
    });
  }

  it('replays a turn that died after the D1 batch and before confirm, with no duplicates and nothing missing', async () => {
    const id = await newIdentity();
    const { teamId } = await idsOf(id);
    const sid = fresh('s');
    const scenario = fresh('crash');
    await script(scenario, []);
    let crashes = 0;
    await insideSession(sessionStub(teamId, sid), (instance) => {
      instance.testSeams.fault = (point) => (point === 'after-store' && crashes++ === 0 ? 'crash' : undefined);
    });
    await send(id.token, 'init', initEvent(sid, 'Rename the module'));
    for (let i = 0; i < 3; i++)
      await send(
        id.token,
        'observations',
        toolEvent(sid, i === 0 ? `SCENARIO:${scenario} rename-${i}` : `rename-${i}`),
      );

    // The dead turn keeps its claim and its lease: nothing is confirmed, nothing else runs meanwhile.
    const stuck = await waitFor(id.token, sid, (s) => s.in_flight > 0 && s.in_flight + s.pending === 3);
    // An alarm fired while the lease holds changes nothing.
    await runDurableObjectAlarm(sessionStub(teamId, sid));
    expect(await status(id.token, sid)).toMatchObject({ turns: 0, in_flight: stuck.in_flight, pending: stuck.pending });
    expect(await countRows(sid)).toEqual({ total: stuck.in_flight, distinct: stuck.in_flight });

    // Later the lease has expired: the next alarm takes the claimed events back and observes them again.
    await runInDurableObject(sessionStub(teamId, sid), (_i, state) => {
      state.storage.sql.exec('UPDATE lease SET expires_at = 0');
    });
    expect(await runAlarmNow(teamId, sid)).toBe(true);
    const done = await waitFor(id.token, sid, (s) => settled(s) && s.turns >= 1);
    expect(done.dead_letters).toEqual([]);
    // The dead turn was stored: it is recognised by its turn key and its events are not shown to the observer
    // again (the scenario marker travels with the first event, which the dead turn held).
    expect((await recorded(scenario)).length).toBe(1);
    expect(await countRows(sid)).toEqual({ total: 3, distinct: 3 });
  });

  it('stores a turn once when the observer would reword it on every retry after a crash between store and confirm', async () => {
    const id = await newIdentity();
    const { teamId } = await idsOf(id);
    const sid = fresh('s');
    const scenario = fresh('reword');
    const answer = (n: number) => ({
      text: `<observation><type>discovery</type><title>Deploy script wording ${n}</title><narrative>The deploy script was run (telling ${n}).</narrative></observation>`,
    });
    await script(scenario, [answer(1), answer(2), answer(3)]);
    let crashes = 0;
    await insideSession(sessionStub(teamId, sid), (instance) => {
      instance.testSeams.fault = (point) => (point === 'after-store' && crashes++ === 0 ? 'crash' : undefined);
    });
    await send(id.token, 'observations', toolEvent(sid, `SCENARIO:${scenario} ./deploy.sh`));
    await waitFor(id.token, sid, (s) => s.in_flight === 1);
    await runInDurableObject(sessionStub(teamId, sid), (_i, state) => {
      state.storage.sql.exec('UPDATE lease SET expires_at = 0');
    });
    await runAlarmNow(teamId, sid);
    await waitFor(id.token, sid, (s) => settled(s) && s.turns >= 1);
    // The replayed turn was recognised as stored: the observer was not asked to tell it again.
    expect((await recorded(scenario)).length).toBe(1);
    expect(await countRows(sid)).toEqual({ total: 1, distinct: 1 });
    const title = await env.DB.prepare(
      'SELECT o.title FROM observations o JOIN sessions s ON s.id = o.session_id WHERE s.session_key = ?',
    )
      .bind(sid)
      .first<{ title: string }>();
    expect(title?.title).toBe('Deploy script wording 1');
  });

  it('retries a batch whose D1 write failed and stores it exactly once', async () => {
    const id = await newIdentity();
    const { teamId } = await idsOf(id);
    const sid = fresh('s');
    const scenario = fresh('d1fail');
    await script(scenario, []);
    let failures = 0;
    await insideSession(sessionStub(teamId, sid), (instance) => {
      instance.testSeams.fault = (point) => {
        if (point === 'before-store' && failures++ === 0) throw new Error('D1 went away');
      };
    });
    await send(id.token, 'observations', toolEvent(sid, `SCENARIO:${scenario} build`));
    const failed = await waitFor(id.token, sid, (s) => s.backoff_until !== null && s.in_flight === 0);
    expect(failed.last_error).toContain('D1 went away');
    expect(await pendingAttempts(teamId, sid)).toEqual([1]);
    expect(await runAlarmNow(teamId, sid)).toBe(true);
    await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored === 1);
    expect(await countRows(sid)).toEqual({ total: 1, distinct: 1 });
  });

  it('moves an event that keeps failing to the dead-letter table, visible in status, after 5 tries', async () => {
    const id = await newIdentity();
    const { teamId } = await idsOf(id);
    const sid = fresh('s');
    const scenario = fresh('poison');
    await script(
      scenario,
      Array.from({ length: 5 }, () => ({ status: 500, error: { type: 'api_error', message: 'boom' } })),
    );
    const ev = toolEvent(sid, `SCENARIO:${scenario} poison`);
    await send(id.token, 'observations', ev);
    await waitFor(id.token, sid, (s) => s.backoff_until !== null && s.in_flight === 0);
    for (let i = 1; i < 5; i++) {
      await runAlarmNow(teamId, sid);
      await waitFor(id.token, sid, (s) => s.in_flight === 0 && s.backoff_until !== null);
    }
    await runAlarmNow(teamId, sid);
    const s = await status(id.token, sid);
    expect(s.pending).toBe(0);
    expect(s.dead_letters).toEqual([
      expect.objectContaining({
        event_id: ev.event_id,
        kind: 'observation',
        attempts: 5,
        last_error: expect.stringContaining('500'),
      }),
    ]);
    expect((await recorded(scenario)).length).toBe(5);

    // Once the cause is fixed, the dead letters get a fresh budget; strangers cannot touch them.
    const stranger = await newIdentity();
    expect(
      (await call(`/api/sessions/${sid}/dead-letters/retry`, { token: stranger.token, method: 'POST' })).status,
    ).toBe(404);
    const retry = await call(`/api/sessions/${sid}/dead-letters/retry`, { token: id.token, method: 'POST' });
    expect(await retry.json()).toEqual({ session_id: sid, requeued: 1 });
    const done = await waitFor(id.token, sid, (st) => settled(st) && st.observations_stored === 1);
    expect(done.dead_letters).toEqual([]);
  });
});
