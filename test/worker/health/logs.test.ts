// What the Worker logs is structured and never memory text: an observer that answers in prose, one whose reply
// says its key was refused, and a store that fails all log what happened (codes, counts, ids) without the words
// of the session. Every console line written during the test is captured and searched for them.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { initEvent, script, send, settled, toolEvent, waitFor } from '../pipeline/support';
import { call, fresh, newIdentity } from '../support/http';
import { idsOf } from '../support/seed';

const SECRET_WORDS = 'zebra-quartz-7741';
let lines: unknown[][] = [];

beforeEach(() => {
  lines = [];
  for (const level of ['log', 'warn', 'error', 'info'] as const)
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void lines.push(args));
});
afterEach(() => vi.restoreAllMocks());

const written = () => lines.map((args) => args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));

describe('logs', () => {
  it('say that an observer answered in prose or refused, with codes and counts, and never the session text', async () => {
    const id = await newIdentity();
    const { teamId } = await idsOf(id);
    const sid = fresh('s');
    const scenario = fresh('log');
    await script(scenario, [
      { text: `I looked at ${SECRET_WORDS} and it seems fine.` },
      { text: `Your credit balance is too low to access the API; ${SECRET_WORDS}` },
      { text: `I cannot: authentication failed for ${SECRET_WORDS}` },
    ]);
    await send(id.token, 'init', initEvent(sid, `deploy the ${SECRET_WORDS} service`));
    await send(id.token, 'observations', toolEvent(sid, `SCENARIO:${scenario} echo ${SECRET_WORDS}`));
    await waitFor(id.token, sid, (s) => settled(s) && s.turns >= 1);
    await send(id.token, 'observations', toolEvent(sid, `SCENARIO:${scenario} cat ${SECRET_WORDS}.txt`));
    await waitFor(id.token, sid, (s) => s.backoff_until !== null && s.in_flight === 0);

    const out = written();
    expect(
      out.some(
        (l) =>
          l.includes('"event":"observer reply was not usable XML; events confirmed without observations"') &&
          l.includes('"chars"'),
      ),
    ).toBe(true);
    expect(out.some((l) => l.includes('"event":"observer turn backing off"') && l.includes('"kind":"spend_cap"'))).toBe(
      true,
    );
    expect(out.filter((l) => l.includes(SECRET_WORDS))).toEqual([]);
    expect(out.some((l) => l.includes(`"team_id":${teamId}`))).toBe(true);
  });

  it('names the request in every answer, so a user can quote it', async () => {
    const id = await newIdentity();
    const res = await call('/api/projects', { token: id.token });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const ray = await call('/api/health', { headers: { 'cf-ray': '8f1c2a3b4c5d6e7f-AMS' } });
    expect(ray.headers.get('x-request-id')).toBe('8f1c2a3b4c5d6e7f-AMS');
  });
});
