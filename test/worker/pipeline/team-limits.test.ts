// Across the sessions of one team: at most OBSERVER_CONCURRENCY (4) observer calls at once, and a rate
// limit seen by one session holds back the others.
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { fresh, newIdentity } from '../support/http';
import { idsOf } from '../support/seed';
import {
  arrived,
  initEvent,
  recorded,
  release,
  runAlarmNow,
  script,
  send,
  sessionStub,
  settled,
  startAlarm,
  status,
  teamStub,
  toolEvent,
  waitFor,
} from './support';

describe('team-wide observer limits', { timeout: 120_000 }, () => {
  it('never runs more than four observer calls of one team at once, and every session gets its turn', async () => {
    const id = await newIdentity();
    const { teamId } = await idsOf(id);
    const scenario = fresh('cap');
    // Observer calls are held unanswered until released: four sessions hold their slots as long as the test needs.
    await script(scenario, [], 0, { hold: true });
    const sessions = Array.from({ length: 6 }, () => fresh('s'));
    await Promise.all(
      sessions.map((sid) => send(id.token, 'observations', toolEvent(sid, `SCENARIO:${scenario} work in ${sid}`))),
    );
    // Every session's alarm now, not after its events gathered: four get a slot and reach the observer.
    for (const sid of sessions) startAlarm(teamId, sid);
    expect(await arrived(scenario, 4)).toHaveLength(4);
    expect(await teamStub(teamId).activeSlots()).toHaveLength(4);
    // The two sessions without a slot try again now: the team refuses them while the four are in flight.
    for (const sid of sessions) {
      if ((await status(id.token, sid)).in_flight === 0) await runDurableObjectAlarm(sessionStub(teamId, sid));
    }
    expect(await recorded(scenario)).toHaveLength(4);
    await release(scenario);
    for (const sid of sessions) await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored === 1, 60_000);

    // Every session was observed once, and at no moment were more than four calls unanswered.
    const calls = await recorded(scenario);
    expect(calls).toHaveLength(6);
    const inFlightAt = (t: number) => calls.filter((c) => c.at <= t && t < c.answeredAt!).length;
    expect(Math.max(...calls.map((c) => inFlightAt(c.at)))).toBe(4);
  });

  it('holds every session of the team back after one of them is rate limited', async () => {
    const id = await newIdentity();
    const { teamId } = await idsOf(id);
    const a = fresh('s');
    const b = fresh('s');
    const scenarioA = fresh('rl-a');
    const scenarioB = fresh('rl-b');
    await script(scenarioA, [
      { status: 429, headers: { 'retry-after': '30' }, error: { type: 'rate_limit_error', message: 'slow down' } },
    ]);
    await script(scenarioB, []);
    await send(id.token, 'observations', toolEvent(a, `SCENARIO:${scenarioA} first`));
    await waitFor(id.token, a, (s) => s.backoff_until !== null);
    const shared = await teamStub(teamId).backoffUntil();
    expect(shared.kind).toBe('rate_limit');

    await send(id.token, 'init', initEvent(b, 'another session of the team'));
    await send(id.token, 'observations', toolEvent(b, `SCENARIO:${scenarioB} second`));
    // B's alarm (fired here, whether or not it already ran on its own) asks the team, is refused, and is
    // rescheduled for when the shared back-off ends.
    await runDurableObjectAlarm(sessionStub(teamId, b));
    expect(await status(id.token, b)).toMatchObject({ pending: 1, in_flight: 0, observations_stored: 0 });
    expect(await recorded(scenarioB)).toHaveLength(0);
    const alarm = await runInDurableObject(sessionStub(teamId, b), (_i, state) => state.storage.getAlarm());
    expect(alarm).toBeGreaterThanOrEqual(shared.until - 1);

    expect(await runAlarmNow(teamId, b)).toBe(true);
    await waitFor(id.token, b, (s) => settled(s) && s.observations_stored === 1);
    expect(await recorded(scenarioB)).toHaveLength(1);
  });
});
