// Batching emerges from the speed difference: events that arrive during a slow turn share the next one.
import { describe, expect, it } from 'vitest';
import { fresh, newIdentity } from '../support/http';
import { countRows, initEvent, lastUserText, recorded, script, send, settled, toolEvent, waitFor } from './support';

describe('batching while the observer is slow', () => {
  it('observes 30 events in fewer turns than events, each event in exactly one turn', async () => {
    const id = await newIdentity();
    const sid = fresh('s');
    const scenario = fresh('slow');
    await script(scenario, [], 400);
    await send(id.token, 'init', initEvent(sid, 'Run the whole migration'));
    const markers = Array.from({ length: 30 }, (_, i) => `step-${String(i).padStart(2, '0')}-done`);
    for (const [i, m] of markers.entries()) {
      const res = await send(id.token, 'observations', toolEvent(sid, i === 0 ? `SCENARIO:${scenario} ${m}` : m));
      expect(res.body).toEqual({ accepted: true, duplicate: false });
    }
    const done = await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored >= 30, 30_000);

    const batches = (await recorded(scenario)).map(lastUserText);
    expect(batches.length).toBeLessThan(30);
    expect(done.turns).toBe(batches.length);
    for (const m of markers) expect(batches.filter((b) => b.includes(m)).length).toBe(1);
    const blocksPerTurn = batches.map((b) => b.split('<observed_from_primary_session>').length - 1);
    expect(Math.max(...blocksPerTurn)).toBeLessThanOrEqual(20);
    expect(blocksPerTurn.reduce((a, b) => a + b, 0)).toBe(30);
    expect(await countRows(sid)).toEqual({ total: 30, distinct: 30 });
  });
});
