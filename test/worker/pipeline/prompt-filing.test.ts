// Events belong to the prompt during which they happened: a tool event or a stop of a private prompt that
// arrives late (async hooks, spool replays) is never shown to the observer and never stored, whatever the
// order in which the prompt, the next prompt, the event and the summary arrive. Checked in storage.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { fresh, newIdentity } from '../support/http';
import { idsOf } from '../support/seed';
import { base, holdLease, initEvent, recorded, runAlarmNow, script, send, sessionStub, settled, toolEvent, waitFor } from './support';

type Item = 'private-init' | 'next-init' | 'late-event' | 'late-summary';
const ITEMS: Item[] = ['private-init', 'next-init', 'late-event', 'late-summary'];

function permutations<T>(xs: T[]): T[][] {
  if (xs.length <= 1) return [xs];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest]));
}

/** Every place in D1 and in the session's Durable Object where text of the session could remain. */
async function storedAnywhere(teamId: number, sid: string, secret: string): Promise<string[]> {
  const like = `%${secret}%`;
  const hits: string[] = [];
  const d1: [string, string][] = [
    ['observations', "SELECT COUNT(*) AS n FROM observations WHERE title || ' ' || COALESCE(narrative, '') || facts || files_read || files_modified LIKE ?"],
    ['summaries', "SELECT COUNT(*) AS n FROM summaries WHERE request || investigated || learned || completed || next_steps || COALESCE(notes, '') LIKE ?"],
    ['prompts', 'SELECT COUNT(*) AS n FROM prompts WHERE text LIKE ?'],
  ];
  for (const [name, sql] of d1) if (((await env.DB.prepare(sql).bind(like).first<{ n: number }>())?.n ?? 0) > 0) hits.push(name);
  const inDo = await runInDurableObject(sessionStub(teamId, sid), (_i, state) => {
    const sql = state.storage.sql;
    const out: string[] = [];
    if (sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM pending WHERE payload LIKE ?', like).one().n > 0) out.push('do.pending');
    if (sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM dead_letters WHERE payload LIKE ?', like).one().n > 0) out.push('do.dead_letters');
    if (sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM meta WHERE k = 'conversation' AND v LIKE ?", like).one().n > 0) out.push('do.conversation');
    return out;
  });
  return [...hits, ...inDo];
}

/** Holds the session's turn lease, as a long observer turn would: nothing is observed until it is let go. */
async function holdTurns(teamId: number, sid: string): Promise<void> {
  await holdLease(teamId, sid);
}

async function letGo(teamId: number, sid: string): Promise<void> {
  await runInDurableObject(sessionStub(teamId, sid), (_i, state) => state.storage.sql.exec('DELETE FROM lease'));
  await runAlarmNow(teamId, sid);
}

async function playOrder(order: Item[], withPromptIds: boolean) {
  const id = await newIdentity();
  const { teamId } = await idsOf(id);
  const sid = fresh('s');
  const scenario = fresh('filing');
  const secret = `SECRET${fresh('x').replace(/-/g, '')}`;
  await script(scenario, []);
  const t0 = Date.now() - 60_000;
  const ids = withPromptIds ? { a: fresh('pa'), b: fresh('pb') } : null;
  const at = (offset: number, promptId?: string) => ({ occurred_at: t0 + offset, ...(promptId ? { prompt_id: promptId } : {}) });
  // Without prompt ids, an event that arrives before its own prompt is filed by time under the one before; a
  // turn already running when such events arrive is the realistic case, so the observer is held meanwhile.
  if (!withPromptIds) await holdTurns(teamId, sid);

  for (const item of order) {
    if (item === 'private-init') await send(id.token, 'init', { ...initEvent(sid, `<private>${secret} the key</private>`), ...at(1_000, ids?.a) });
    if (item === 'next-init') await send(id.token, 'init', { ...initEvent(sid, 'now fix the tests'), ...at(3_000, ids?.b) });
    if (item === 'late-event') await send(id.token, 'observations', { ...toolEvent(sid, `cat .env # ${secret}`), ...at(2_000, ids?.a) });
    if (item === 'late-summary') {
      await send(id.token, 'summarize', { ...base(sid), event_id: fresh('ev'), last_assistant_message: `The key is ${secret}.`, ...at(2_500, ids?.a) });
    }
  }
  await send(id.token, 'observations', { ...toolEvent(sid, `SCENARIO:${scenario} npm test`), ...at(4_000, ids?.b) });
  if (!withPromptIds) await letGo(teamId, sid);
  const done = await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored >= 1);
  return { teamId, sid, secret, scenario, done };
}

describe('events filed under the prompt during which they happened', { timeout: 60_000 }, () => {
  for (const withPromptIds of [true, false]) {
    it(`never shows or stores a private prompt's late event or summary, in any arrival order (${withPromptIds ? 'with' : 'without'} prompt ids)`, async () => {
      for (const order of permutations(ITEMS)) {
        const r = await playOrder(order, withPromptIds);
        const seen = JSON.stringify(await recorded(r.scenario));
        expect(seen, `order ${order.join(' → ')}`).toContain('npm test');
        expect(seen.includes(r.secret), `observer saw the secret for order ${order.join(' → ')}`).toBe(false);
        expect(await storedAnywhere(r.teamId, r.sid, r.secret), `order ${order.join(' → ')}`).toEqual([]);
        expect(r.done.dead_letters).toEqual([]);
      }
    });
  }

  it('files an event under the prompt its id names, even when a later prompt is current', async () => {
    const id = await newIdentity();
    const sid = fresh('s');
    const t0 = Date.now() - 60_000;
    await send(id.token, 'init', { ...initEvent(sid, 'first request'), occurred_at: t0, prompt_id: 'p-1' });
    await send(id.token, 'init', { ...initEvent(sid, 'second request'), occurred_at: t0 + 10_000, prompt_id: 'p-2' });
    // Its clock says it happened after the second prompt began; its prompt id says it belongs to the first.
    await send(id.token, 'observations', { ...toolEvent(sid, 'echo late'), occurred_at: t0 + 11_000, prompt_id: 'p-1' });
    await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored >= 1);
    const rows = await env.DB.prepare('SELECT o.prompt_number, o.prompt_id FROM observations o JOIN sessions s ON s.id = o.session_id WHERE s.session_key = ?')
      .bind(sid)
      .all<{ prompt_number: number; prompt_id: string | null }>();
    expect(rows.results).toEqual([{ prompt_number: 1, prompt_id: 'p-1' }]);
    const prompts = await env.DB.prepare('SELECT p.prompt_number, p.prompt_id FROM prompts p JOIN sessions s ON s.id = p.session_id WHERE s.session_key = ? ORDER BY 1')
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
      state.storage.sql.exec<{ client_seq: number; prompt_number: number }>('SELECT client_seq, prompt_number FROM pending ORDER BY client_seq').toArray(),
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
    await send(id.token, 'observations', { ...toolEvent(sid, `SCENARIO:${scenario} echo orphan`), occurred_at: t0 + 2_000, prompt_id: 'p-never' });
    const waiting = await waitFor(id.token, sid, (s) => s.pending === 1 && s.in_flight === 0);
    expect(waiting.observations_stored).toBe(0);
    expect((await recorded(scenario)).length).toBe(0);
    expect(await runInDurableObject(sessionStub(teamId, sid), (_i, state) => state.storage.getAlarm())).toBeGreaterThan(Date.now() + 60_000);

    await runInDurableObject(sessionStub(teamId, sid), (_i, state) => state.storage.sql.exec('UPDATE pending SET received_at = received_at - 301000'));
    await runAlarmNow(teamId, sid);
    await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored === 1);
    const row = await env.DB.prepare('SELECT o.prompt_number FROM observations o JOIN sessions s ON s.id = o.session_id WHERE s.session_key = ?')
      .bind(sid)
      .first<{ prompt_number: number }>();
    expect(row?.prompt_number).toBe(1);
  });
});
