// GET /api/context/session: one session's record so far (the block injected after a compaction, the status
// line's count), against real D1: only that session, only what the caller may read, bounded, never a 404.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, fresh, newIdentity } from '../support/http';
import { idsOf, seedObservation, seedProject, seedSession, seedSummary } from '../support/seed';

const T0 = Date.parse('2026-05-04T09:00:00Z');

async function world() {
  const me = await newIdentity();
  const ids = await idsOf(me);
  const projectId = await seedProject(ids, `github.com/acme/${fresh('repo')}`);
  const key = fresh('sess');
  const session = await seedSession(ids, projectId, key, T0);
  return { me, ids, projectId, key, session };
}

const soFar = (token: string, query: string) => call(`/api/context/session?${query}`, { token });

describe('GET /api/context/session', () => {
  it("answers this session's observations oldest first with its latest summary, and nothing of another session", async () => {
    const w = await world();
    const other = await seedSession(w.ids, w.projectId, fresh('sess'), T0);
    const a = await seedObservation(w.ids, w.projectId, w.session, {
      type: 'bugfix',
      title: 'Cache key includes locale',
      createdAt: T0,
    });
    const b = await seedObservation(w.ids, w.projectId, w.session, {
      type: 'discovery',
      title: 'Router reads the cookie late',
      createdAt: T0 + 60_000,
    });
    await seedObservation(w.ids, w.projectId, other, { title: 'Work of another session', createdAt: T0 + 120_000 });
    const s = await seedSummary(w.ids, w.projectId, w.session, {
      request: 'Fix the wrong language',
      completed: 'Locale read first',
      createdAt: T0 + 180_000,
    });
    const res = await soFar(w.me.token, `session=${encodeURIComponent(w.key)}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { observations: number; summarized: boolean; text: string };
    expect(body.observations).toBe(2);
    expect(body.summarized).toBe(true);
    expect(body.text.startsWith('<cairn-session-so-far>\n')).toBe(true);
    expect(body.text.endsWith('\n</cairn-session-so-far>')).toBe(true);
    expect(body.text.indexOf(`${a} 9:00`)).toBeGreaterThan(0);
    expect(body.text.indexOf(`${b} 9:01`)).toBeGreaterThan(body.text.indexOf(`${a} 9:00`));
    expect(body.text).toContain(`Latest summary S${s} 9:03: Fix the wrong language`);
    expect(body.text).toContain(' Completed: Locale read first');
    expect(body.text).not.toContain('Work of another session');
    const text = await (await soFar(w.me.token, `session=${encodeURIComponent(w.key)}&format=text`)).text();
    expect(text).toBe(body.text);
  });

  it('keeps the newest rows within max_chars and says how many earlier ones it left out', async () => {
    const w = await world();
    for (let i = 0; i < 30; i++)
      await seedObservation(w.ids, w.projectId, w.session, {
        title: `Step number ${i} of a long session with a fairly long title`,
        createdAt: T0 + i * 1000,
      });
    const body = (await (await soFar(w.me.token, `session=${encodeURIComponent(w.key)}&max_chars=600`)).json()) as {
      observations: number;
      text: string;
    };
    expect(body.observations).toBe(30);
    expect(body.text.length).toBeLessThanOrEqual(600);
    expect(body.text).toContain('Step number 29 of');
    expect(body.text).not.toContain('Step number 0 of');
    expect(body.text).toMatch(/\(\d+ earlier observations of this session not shown\)/);
  });

  it("answers zeros for an unknown session, another team's session and deleted rows", async () => {
    const w = await world();
    const gone = await seedObservation(w.ids, w.projectId, w.session, { title: 'Forgotten later', createdAt: T0 });
    await env.DB.prepare('UPDATE observations SET deleted_at = ? WHERE id = ?').bind(T0, gone).run();
    const mine = (await (await soFar(w.me.token, `session=${encodeURIComponent(w.key)}`)).json()) as {
      observations: number;
      text: string;
    };
    expect(mine).toMatchObject({ observations: 0, text: '' });
    const stranger = await newIdentity();
    const theirs = (await (await soFar(stranger.token, `session=${encodeURIComponent(w.key)}`)).json()) as {
      observations: number;
      text: string;
    };
    expect(theirs).toMatchObject({ observations: 0, text: '' });
    const unknown = await soFar(w.me.token, 'session=no-such-session');
    expect(unknown.status).toBe(200);
  });

  it('refuses a missing session id and a max_chars out of range with 400 invalid_query', async () => {
    const w = await world();
    for (const q of ['', 'session=', `session=${w.key}&max_chars=10`, `session=${'x'.repeat(300)}`]) {
      const res = await soFar(w.me.token, q);
      expect(res.status, q).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toMatch(/^[a-z_]+$/);
    }
  });
});
