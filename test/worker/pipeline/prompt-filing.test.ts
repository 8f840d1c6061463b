// Events belong to the prompt during which they happened: a tool event or a stop of a private prompt that
// arrives late (async hooks, spool replays) is never shown to the observer and never stored, whatever the
// order in which the prompt, the next prompt, the event and the summary arrive. Checked in storage. Every
// arrival order of a private prompt's late event and summary is played in prompt-filing.slow.test.ts.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { fresh, newIdentity } from '../support/http';
import { idsOf } from '../support/seed';
import {
  holdLease,
  initEvent,
  recorded,
  runAlarmNow,
  script,
  send,
  sessionStub,
  settled,
  toolEvent,
  waitFor,
} from './support';

/** Holds the session's turn lease, as a long observer turn would: nothing is observed until it is let go. */
async function holdTurns(teamId: number, sid: string): Promise<void> {
  await holdLease(teamId, sid);
}

describe('events filed under the prompt during which they happened', { timeout: 60_000 }, () => {
  it('files an event under the prompt its id names, even when a later prompt is current', async () => {
    const id = await newIdentity();
    const sid = fresh('s');
    const t0 = Date.now() - 60_000;
    await send(id.token, 'init', { ...initEvent(sid, 'first request'), occurred_at: t0, prompt_id: 'p-1' });
    await send(id.token, 'init', { ...initEvent(sid, 'second request'), occurred_at: t0 + 10_000, prompt_id: 'p-2' });
    // Its clock says it happened after the second prompt began; its prompt id says it belongs to the first.
    await send(id.token, 'observations', {
      ...toolEvent(sid, 'echo late'),
      occurred_at: t0 + 11_000,
      prompt_id: 'p-1',
    });
    await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored >= 1);
    const rows = await env.DB.prepare(
      'SELECT o.prompt_number, o.prompt_id FROM observations o JOIN sessions s ON s.id = o.session_id WHERE s.session_key = ?',
    )
      .bind(sid)
      .all<{ prompt_number: number; prompt_id: string | null }>();
    expect(rows.results).toEqual([{ prompt_number: 1, prompt_id: 'p-1' }]);
    const prompts = await env.DB.prepare(
      'SELECT p.prompt_number, p.prompt_id FROM prompts p JOIN sessions s ON s.id = p.session_id WHERE s.session_key = ? ORDER BY 1',
    )
      .bind(sid)
      .all();
    expect(prompts.results).toEqual([
      { prompt_number: 1, prompt_id: 'p-1' },
      { prompt_number: 2, prompt_id: 'p-2' },
    ]);
  });

  it('orders events that share a millisecond with a prompt by the client counter', async () => {
    const id = await newIdentity();
    const { teamId } = await idsOf(id);
    const sid = fresh('s');
    const t = Date.now() - 60_000;
    await holdTurns(teamId, sid);
    await send(id.token, 'init', { ...initEvent(sid, 'first request'), occurred_at: t - 5_000, client_seq: 1 });
    await send(id.token, 'init', { ...initEvent(sid, 'second request'), occurred_at: t, client_seq: 3 });
    await send(id.token, 'observations', { ...toolEvent(sid, 'echo before'), occurred_at: t, client_seq: 2 });
    await send(id.token, 'observations', { ...toolEvent(sid, 'echo after'), occurred_at: t, client_seq: 4 });
    const filed = await runInDurableObject(sessionStub(teamId, sid), (_i, state) =>
      state.storage.sql
        .exec<{ client_seq: number; prompt_number: number }>(
          'SELECT client_seq, prompt_number FROM pending ORDER BY client_seq',
        )
        .toArray(),
    );
    expect(filed).toEqual([
      { client_seq: 2, prompt_number: 1 },
      { client_seq: 4, prompt_number: 2 },
    ]);
  });

  it('holds an event that names a prompt not seen yet, and files it by its time once it waited five minutes', async () => {
    const id = await newIdentity();
    const { teamId } = await idsOf(id);
    const sid = fresh('s');
    const scenario = fresh('wait');
    await script(scenario, []);
    const t0 = Date.now() - 60_000;
    await send(id.token, 'init', { ...initEvent(sid, 'first request'), occurred_at: t0, prompt_id: 'p-1' });
    await send(id.token, 'observations', {
      ...toolEvent(sid, `SCENARIO:${scenario} echo orphan`),
      occurred_at: t0 + 2_000,
      prompt_id: 'p-never',
    });
    const waiting = await waitFor(id.token, sid, (s) => s.pending === 1 && s.in_flight === 0);
    expect(waiting.observations_stored).toBe(0);
    expect((await recorded(scenario)).length).toBe(0);
    expect(await runInDurableObject(sessionStub(teamId, sid), (_i, state) => state.storage.getAlarm())).toBeGreaterThan(
      Date.now() + 60_000,
    );

    await runInDurableObject(sessionStub(teamId, sid), (_i, state) =>
      state.storage.sql.exec('UPDATE pending SET received_at = received_at - 301000'),
    );
    await runAlarmNow(teamId, sid);
    await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored === 1);
    const row = await env.DB.prepare(
      'SELECT o.prompt_number FROM observations o JOIN sessions s ON s.id = o.session_id WHERE s.session_key = ?',
    )
      .bind(sid)
      .first<{ prompt_number: number }>();
    expect(row?.prompt_number).toBe(1);
  });
});
