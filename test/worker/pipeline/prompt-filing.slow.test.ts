// Slow tier (`npm run test:slow`): a private prompt's late event or summary in every one of the 24 arrival
// orders, with and without prompt ids (~1 min). The other filing cases are in prompt-filing.test.ts.
// Events belong to the prompt during which they happened: a tool event or a stop of a private prompt that
// arrives late (async hooks, spool replays) is never shown to the observer and never stored, whatever the
// order in which the prompt, the next prompt, the event and the summary arrive. Checked in storage.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { fresh, newIdentity } from '../support/http';
import { idsOf } from '../support/seed';
import {
  base,
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
    [
      'observations',
      "SELECT COUNT(*) AS n FROM observations WHERE title || ' ' || COALESCE(narrative, '') || facts || files_read || files_modified LIKE ?",
    ],
    [
      'summaries',
      "SELECT COUNT(*) AS n FROM summaries WHERE request || investigated || learned || completed || next_steps || COALESCE(notes, '') LIKE ?",
    ],
    ['prompts', 'SELECT COUNT(*) AS n FROM prompts WHERE text LIKE ?'],
  ];
  for (const [name, sql] of d1)
    if (((await env.DB.prepare(sql).bind(like).first<{ n: number }>())?.n ?? 0) > 0) hits.push(name);
  const inDo = await runInDurableObject(sessionStub(teamId, sid), (_i, state) => {
    const sql = state.storage.sql;
    const out: string[] = [];
    if (sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM pending WHERE payload LIKE ?', like).one().n > 0)
      out.push('do.pending');
    if (sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM dead_letters WHERE payload LIKE ?', like).one().n > 0)
      out.push('do.dead_letters');
    if (
      sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM meta WHERE k = 'conversation' AND v LIKE ?", like).one().n > 0
    )
      out.push('do.conversation');
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
  const at = (offset: number, promptId?: string) => ({
    occurred_at: t0 + offset,
    ...(promptId ? { prompt_id: promptId } : {}),
  });
  // Without prompt ids, an event that arrives before its own prompt is filed by time under the one before; a
  // turn already running when such events arrive is the realistic case, so the observer is held meanwhile.
  if (!withPromptIds) await holdTurns(teamId, sid);

  for (const item of order) {
    if (item === 'private-init')
      await send(id.token, 'init', { ...initEvent(sid, `<private>${secret} the key</private>`), ...at(1_000, ids?.a) });
    if (item === 'next-init')
      await send(id.token, 'init', { ...initEvent(sid, 'now fix the tests'), ...at(3_000, ids?.b) });
    if (item === 'late-event')
      await send(id.token, 'observations', { ...toolEvent(sid, `cat .env # ${secret}`), ...at(2_000, ids?.a) });
    if (item === 'late-summary') {
      await send(id.token, 'summarize', {
        ...base(sid),
        event_id: fresh('ev'),
        last_assistant_message: `The key is ${secret}.`,
        ...at(2_500, ids?.a),
      });
    }
  }
  await send(id.token, 'observations', { ...toolEvent(sid, `SCENARIO:${scenario} npm test`), ...at(4_000, ids?.b) });
  if (!withPromptIds) await letGo(teamId, sid);
  const done = await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored >= 1);
  return { teamId, sid, secret, scenario, done };
}

describe('events filed under the prompt during which they happened, in every arrival order', {
  timeout: 60_000,
}, () => {
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
});
