// GET /api/context on real D1 with the caller's checkout: rows of the current branch, the trunk and merged branches come
// first; rows of a branch that never merged give way and carry its name; older rows and older clients stay neutral.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, fresh, newIdentity } from '../support/http';
import { idsOf, seedObservation, seedProject, seedSession, seedSummary } from '../support/seed';

const T0 = Date.parse('2026-05-04T09:00:00Z');
const MIN = 60_000;
const sha = (c: string) => c.repeat(40).slice(0, 40);
const M1 = sha('1');
const M2 = sha('2');
const S1 = sha('3');
const F1 = sha('4');
const X1 = sha('5');

async function setGit(
  table: 'observations' | 'sessions',
  id: number,
  branch: string | null,
  commit: string | null,
): Promise<void> {
  await env.DB.prepare(`UPDATE ${table} SET git_branch = ?, git_commit = ? WHERE id = ?`)
    .bind(branch, commit, id)
    .run();
}

/** main (M1, M2), a merged feature (S1), the current branch feature-y (F1), an abandoned spike (cut at M1, then X1). */
async function history() {
  const me = await newIdentity();
  const ids = await idsOf(me);
  const key = `github.com/acme/${fresh('repo')}`;
  const projectId = await seedProject(ids, key);
  const session = await seedSession(ids, projectId, fresh('s'), T0);
  const rows: Record<string, number> = {};
  const add = async (name: string, minute: number, branch: string | null, commit: string | null) => {
    rows[name] = await seedObservation(ids, projectId, session, {
      type: 'discovery',
      title: `Row ${name}`,
      createdAt: T0 + minute * MIN,
    });
    await setGit('observations', rows[name]!, branch, commit);
  };
  await add('old', 1, null, null);
  await add('main1', 2, 'main', M1);
  await add('spikeStart', 3, 'spike/cache', M1);
  await add('merged', 4, 'feat/merged', S1);
  await add('main2', 5, 'main', M2);
  await add('mine', 6, 'feature-y', F1);
  await add('spike', 7, 'spike/cache', X1);
  await add('spike2', 8, 'spike/cache', X1);
  const spikeSession = await seedSession(ids, projectId, fresh('s'), T0 + 7 * MIN);
  await setGit('sessions', spikeSession, 'spike/cache', M1);
  const spikeSummary = await seedSummary(ids, projectId, spikeSession, {
    request: 'Try a warm cache',
    createdAt: T0 + 9 * MIN,
  });
  return { me, key, rows, spikeSummary };
}

const view = new URLSearchParams({
  branch: 'feature-y',
  head: F1,
  trunk: 'main',
  history: [F1, M2, S1, M1].map((c) => c.slice(0, 12)).join(','),
});
const rowLine = (text: string, id: number) => text.split('\n').find((l) => l.startsWith(`${id} `));

describe('the context index and the caller’s branch', () => {
  it('marks every row of a branch that never merged, judged by its newest commit, and leaves merged, trunk and unknown rows plain', async () => {
    const h = await history();
    const text = await (
      await call(`/api/context?project=${encodeURIComponent(h.key)}&${view}`, { token: h.me.token })
    ).text();
    for (const name of ['spikeStart', 'spike', 'spike2'])
      expect(rowLine(text, h.rows[name]!)).toMatch(/ ⎇spike\/cache$/);
    for (const name of ['old', 'main1', 'merged', 'main2', 'mine']) {
      expect(rowLine(text, h.rows[name]!)).toBeDefined();
      expect(rowLine(text, h.rows[name]!)).not.toContain('⎇');
    }
    expect(text).toMatch(new RegExp(`^S${h.spikeSummary} .*⎇spike/cache$`, 'm'));
    expect(text).toContain('⎇=unmerged branch');
  });

  it('lets unmerged rows give way when the index is full, keeping the newest merged ones', async () => {
    const h = await history();
    const text = await (
      await call(`/api/context?project=${encodeURIComponent(h.key)}&observations=5&${view}`, { token: h.me.token })
    ).text();
    const shown = Object.entries(h.rows)
      .filter(([, id]) => rowLine(text, id))
      .map(([name]) => name);
    expect(shown).toEqual(['old', 'main1', 'merged', 'main2', 'mine']);
  });

  it('fills the slots left with unmerged rows, newest first, after every merged one', async () => {
    const h = await history();
    const text = await (
      await call(`/api/context?project=${encodeURIComponent(h.key)}&observations=7&${view}`, { token: h.me.token })
    ).text();
    const shown = Object.entries(h.rows)
      .filter(([, id]) => rowLine(text, id))
      .map(([name]) => name);
    expect(shown).toEqual(['old', 'main1', 'merged', 'main2', 'mine', 'spike', 'spike2']);
  });

  it('answers a client that sends no checkout exactly as before: newest rows, no marks', async () => {
    const h = await history();
    const text = await (
      await call(`/api/context?project=${encodeURIComponent(h.key)}&observations=5`, { token: h.me.token })
    ).text();
    const shown = Object.entries(h.rows)
      .filter(([, id]) => rowLine(text, id))
      .map(([name]) => name);
    expect(shown).toEqual(['merged', 'main2', 'mine', 'spike', 'spike2']);
    expect(text).not.toContain('⎇');
  });

  it('calls nothing unmerged when the client could not read its history (git missing), only knows its branch', async () => {
    const h = await history();
    const q = new URLSearchParams({ branch: 'feature-y', head: F1 });
    const text = await (
      await call(`/api/context?project=${encodeURIComponent(h.key)}&${q}`, { token: h.me.token })
    ).text();
    expect(text).not.toContain('⎇');
    expect(rowLine(text, h.rows.spike2!)).toBeDefined();
  });

  it.each([
    ['a history entry that is not 12 hex digits', { history: 'abc' }],
    ['more than 200 history entries', { history: Array.from({ length: 201 }, () => 'a'.repeat(12)).join(',') }],
    ['a branch with a space', { branch: 'my branch' }],
    ['a head that is not a commit id', { head: 'HEAD' }],
  ])('refuses %s with 400 invalid_query', async (_what, extra) => {
    const h = await history();
    const res = await call(`/api/context?project=${encodeURIComponent(h.key)}&${new URLSearchParams(extra)}`, {
      token: h.me.token,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_query');
  });
});
