// Batching emerges from the speed difference: events that arrive during a slow turn share the next one.
import { describe, expect, it } from 'vitest';
import { call } from '../support/http';
import { idsOf } from '../support/seed';
import { fresh, newIdentity } from '../support/http';
import { runDurableObjectAlarm } from 'cloudflare:test';
import {
  countRows,
  initEvent,
  lastUserText,
  recorded,
  release,
  runAlarmNow,
  script,
  send,
  sessionStub,
  settled,
  toolEvent,
  waitFor,
} from './support';

describe('batching while the observer is slow', { timeout: 60_000 }, () => {
  it('observes 30 events in fewer turns than events, each event in exactly one turn', async () => {
    const id = await newIdentity();
    const sid = fresh('s');
    const scenario = fresh('slow');
    // The observer holds its first answer until every event is in, however slowly they arrive.
    await script(scenario, [], 0, { hold: true });
    await send(id.token, 'init', initEvent(sid, 'Run the whole migration'));
    const markers = Array.from({ length: 30 }, (_, i) => `step-${String(i).padStart(2, '0')}-done`);
    for (const [i, m] of markers.entries()) {
      const res = await send(id.token, 'observations', toolEvent(sid, i === 0 ? `SCENARIO:${scenario} ${m}` : m));
      expect(res.body).toEqual({ accepted: true, duplicate: false });
      if (i === 0) await waitFor(id.token, sid, (s) => s.in_flight > 0);
    }
    await release(scenario);
    const done = await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored >= 30, 30_000);

    // The events each turn observed; the earlier records a later turn is shown (<prior_records>) may name a marker too.
    const batches = (await recorded(scenario)).map((r) =>
      lastUserText(r).replace(/<prior_records>[\s\S]*?<\/prior_records>/g, ''),
    );
    expect(batches.length).toBeLessThan(30);
    expect(done.turns).toBe(batches.length);
    for (const m of markers) expect(batches.filter((b) => b.includes(m)).length).toBe(1);
    const blocksPerTurn = batches.map((b) => b.split('<observed_from_primary_session>').length - 1);
    expect(Math.max(...blocksPerTurn)).toBeLessThanOrEqual(20);
    expect(blocksPerTurn.reduce((a, b) => a + b, 0)).toBe(30);
    expect(await countRows(sid)).toEqual({ total: 30, distinct: 30 });
  });

  it('drains a backlog of 250 events that piled up during a back-off, 20 per turn, none lost', async () => {
    const id = await newIdentity();
    const { teamId } = await idsOf(id);
    const sid = fresh('s');
    const scenario = fresh('backlog');
    await script(scenario, [
      { status: 429, headers: { 'retry-after': '60' }, error: { type: 'rate_limit_error', message: 'slow down' } },
    ]);
    await send(id.token, 'observations', toolEvent(sid, `SCENARIO:${scenario} item-000-x`));
    await waitFor(id.token, sid, (s) => s.backoff_until !== null && s.in_flight === 0);
    for (const [from, to] of [
      [1, 200],
      [200, 250],
    ] as const) {
      const events = Array.from({ length: to - from }, (_, i) => ({
        kind: 'observation',
        ...toolEvent(sid, `item-${String(from + i).padStart(3, '0')}-x`),
      }));
      const res = await call('/api/events/batch', { token: id.token, json: { events } });
      const { results } = (await res.json()) as { results: { accepted?: boolean }[] };
      expect(results.every((r) => r.accepted === true)).toBe(true);
    }
    expect((await waitFor(id.token, sid, (s) => s.pending === 250)).dead_letters).toEqual([]);
    expect(await runAlarmNow(teamId, sid)).toBe(true);
    const done = await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored === 250, 45_000);
    expect(done.turns).toBe(13);
    expect(await countRows(sid)).toEqual({ total: 250, distinct: 250 });
  });

  it('never starts a second turn of a session while one is in flight, even when an alarm fires early', async () => {
    const id = await newIdentity();
    const { teamId } = await idsOf(id);
    const sid = fresh('s');
    const scenario = fresh('one-at-a-time');
    // The first turn is held in flight until released, whatever the machine's load.
    await script(scenario, [], 0, { hold: true });
    await send(id.token, 'observations', toolEvent(sid, `SCENARIO:${scenario} first`));
    await waitFor(id.token, sid, (s) => s.in_flight === 1);
    await send(id.token, 'observations', toolEvent(sid, 'second'));
    // The extra alarm finds the turn's lease and only reschedules itself.
    expect(await runDurableObjectAlarm(sessionStub(teamId, sid))).toBe(true);
    await send(id.token, 'observations', toolEvent(sid, 'third'));
    expect(await recorded(scenario)).toHaveLength(1);
    await release(scenario);
    await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored === 3);
    // Each observer call began only after the one before it was answered.
    const calls = (await recorded(scenario)).sort((a, b) => a.at - b.at);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < calls.length; i++) expect(calls[i]!.at).toBeGreaterThanOrEqual(calls[i - 1]!.answeredAt!);
  });
});
