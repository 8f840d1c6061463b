// Across the sessions of one team: at most OBSERVER_CONCURRENCY (4) observer calls at once, and a rate
// limit seen by one session holds back the others.
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { fresh, newIdentity } from '../support/http';
import { idsOf } from '../support/seed';
import { initEvent, recorded, runAlarmNow, script, send, sessionStub, settled, status, teamStub, toolEvent, waitFor } from './support';

describe('team-wide observer limits', { timeout: 30_000 }, () => {
  it('never runs more than four observer calls of one team at once, and every session gets its turn', async () => {
    const id = await newIdentity();
    const scenario = fresh('cap');
    const delay = 800;
    await script(scenario, [], delay);
    const sessions = Array.from({ length: 6 }, () => fresh('s'));
    await Promise.all(sessions.map((sid) => send(id.token, 'observations', toolEvent(sid, `SCENARIO:${scenario} work in ${sid}`))));
    for (const sid of sessions) await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored === 1, 20_000);

    const starts = (await recorded(scenario)).map((r) => r.at).sort((a, b) => a - b);
    expect(starts).toHaveLength(6);
    const overlap = Math.max(...starts.map((t) => starts.filter((u) => u <= t && t < u + delay - 50).length));
    expect(overlap).toBeLessThanOrEqual(4);
    expect(overlap).toBeGreaterThan(1);
  });

  it('holds every session of the team back after one of them is rate limited', async () => {
    const id = await newIdentity();
    const { teamId } = await idsOf(id);
    const a = fresh('s');
    const b = fresh('s');
    const scenarioA = fresh('rl-a');
    const scenarioB = fresh('rl-b');
    await script(scenarioA, [{ status: 429, headers: { 'retry-after': '30' }, error: { type: 'rate_limit_error', message: 'slow down' } }]);
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
