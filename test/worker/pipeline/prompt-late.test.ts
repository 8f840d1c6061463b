// A prompt whose own event arrives after the tool events and the stop that name it (spool replays by several
// hook processes, a timed-out request the server still finished): once it comes, everything that waited for
// it is observed and summarised at once, also when another turn of the session is running at that moment.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { fresh, newIdentity } from '../support/http';
import { idsOf } from '../support/seed';
import { base, holdLease, initEvent, runAlarmNow, send, sessionStub, settled, toolEvent, waitFor } from './support';

type Item = 'init' | 'tool' | 'stop';

async function storedFor(sid: string): Promise<{ observations: number; summaries: number }> {
  const o = await env.DB.prepare(
    'SELECT COUNT(*) AS n FROM observations o JOIN sessions s ON s.id = o.session_id WHERE s.session_key = ?',
  )
    .bind(sid)
    .first<{ n: number }>();
  const m = await env.DB.prepare(
    'SELECT COUNT(*) AS n FROM summaries x JOIN sessions s ON s.id = x.session_id WHERE s.session_key = ?',
  )
    .bind(sid)
    .first<{ n: number }>();
  return { observations: o?.n ?? 0, summaries: m?.n ?? 0 };
}

async function play(order: Item[], holdDuringInit: boolean) {
  const id = await newIdentity();
  const { teamId } = await idsOf(id);
  const sid = fresh('s');
  const t0 = Date.now() - 60_000;
  // A first prompt, fully observed: the session has a prompt with an id before the late one.
  await send(id.token, 'init', { ...initEvent(sid, 'first request'), occurred_at: t0, prompt_id: 'p-1' });
  await send(id.token, 'observations', { ...toolEvent(sid, 'echo first'), occurred_at: t0 + 1_000, prompt_id: 'p-1' });
  await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored >= 1);
  const stop = {
    ...base(sid),
    event_id: fresh('ev'),
    last_assistant_message: 'Printed the run number.',
    occurred_at: t0 + 12_000,
    prompt_id: 'p-2',
  };
  for (const item of order) {
    if (item === 'init' && holdDuringInit) {
      await holdLease(teamId, sid);
    }
    if (item === 'init')
      await send(id.token, 'init', { ...initEvent(sid, 'second request'), occurred_at: t0 + 10_000, prompt_id: 'p-2' });
    if (item === 'tool')
      await send(id.token, 'observations', {
        ...toolEvent(sid, 'echo second'),
        occurred_at: t0 + 11_000,
        prompt_id: 'p-2',
      });
    if (item === 'stop') await send(id.token, 'summarize', stop);
  }
  if (holdDuringInit) {
    // The held turn ends (as the real one does): its end schedules what is ready.
    await runInDurableObject(sessionStub(teamId, sid), (_i, state) => state.storage.sql.exec('DELETE FROM lease'));
    await runAlarmNow(teamId, sid);
  }
  await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored >= 2, 20_000);
  return { sid };
}

describe('a prompt that arrives after the events that name it', { timeout: 120_000 }, () => {
  const orders: Item[][] = [
    ['tool', 'stop', 'init'],
    ['stop', 'tool', 'init'],
    ['tool', 'init', 'stop'],
    ['stop', 'init', 'tool'],
  ];
  for (const hold of [false, true]) {
    it(`releases the tool events and the summary waiting for it${hold ? ' while another turn is running' : ''}`, async () => {
      for (const order of orders) {
        const r = await play(order, hold);
        expect(await storedFor(r.sid), `order ${order.join(' → ')}`).toEqual({ observations: 2, summaries: 1 });
      }
    });
  }
});
