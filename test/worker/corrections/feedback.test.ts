// Feedback and the review queue on the real stack: MCP feedback through the SDK client, fetch counts from
// get_observations and timeline, the context index a teammate gets, search order, and the admin's decisions.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import worker from '../../../src/index';
import { BASE, call, fresh, newIdentity, type TestIdentity } from '../support/http';

const contexts: ExecutionContext[] = [];
const inProcess = async (url: string | URL, init?: RequestInit): Promise<Response> => {
  const ctx = createExecutionContext();
  contexts.push(ctx);
  return worker.fetch(new Request(url, init), env, ctx);
};
async function tool(
  token: string,
  name: string,
  args: Record<string, unknown>,
): Promise<{ text: string; isError?: boolean }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), {
    fetch: inProcess,
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'cairn-test', version: '0.0.0' });
  await client.connect(transport);
  try {
    const r = (await client.callTool({ name, arguments: args })) as { content: { text: string }[]; isError?: boolean };
    return { text: r.content.map((c) => c.text).join('\n'), isError: r.isError };
  } finally {
    await client.close();
    while (contexts.length) await waitOnExecutionContext(contexts.shift()!);
  }
}
async function remember(token: string, project: string, title: string, text: string): Promise<number> {
  const r = await tool(token, 'remember', { project, title, text });
  expect(r.isError, r.text).toBeFalsy();
  return Number(/#(\d+)/.exec(r.text)?.[1]);
}
const contextOf = async (token: string, project: string) =>
  (await call(`/api/context?project=${encodeURIComponent(project)}`, { token })).text();
const signals = (id: number) =>
  env.DB.prepare('SELECT fetched, useful, wrong, outdated, review FROM observation_signals WHERE observation_id = ?')
    .bind(id)
    .first<{ fetched: number; useful: number; wrong: number; outdated: number; review: string | null }>();
const count = async (sql: string, ...args: unknown[]) =>
  (await env.DB.prepare(sql)
    .bind(...args)
    .first<{ n: number }>())!.n;

interface Team {
  owner: TestIdentity;
  a: TestIdentity;
  c: TestIdentity;
  admin: TestIdentity;
  project: string;
}
let t: Team;
beforeAll(async () => {
  const owner = await newIdentity({ role: 'owner' });
  const [a, c, admin] = await Promise.all([
    newIdentity({ team: owner.team, role: 'member' }),
    newIdentity({ team: owner.team, role: 'member' }),
    newIdentity({ team: owner.team, role: 'admin' }),
  ]);
  t = { owner, a, c, admin, project: `github.com/acme/${fresh('repo')}` };
});

type Queue = {
  flagged: { id: number; wrong: number; last: { action: string; who: string; reason: string } | null }[];
  superseded: { id: number; superseded_by: number }[];
};
const queue = async (token = t.admin.token) => (await (await call('/api/admin/review', { token })).json()) as Queue;
const decide = (id: number, decision: string, token = t.admin.token) =>
  call(`/api/admin/review/${id}`, { token, json: { decision } });

describe('feedback', () => {
  it('takes a record any member flags wrong out of every context index until an admin restores it', async () => {
    const title = `Staging runs on port ${fresh('p')}`;
    const id = await remember(t.a.token, t.project, title, 'Staging listens on that port.');
    expect(await contextOf(t.owner.token, t.project)).toContain(title);

    const flagged = await tool(t.c.token, 'feedback', { id, kind: 'wrong', reason: 'staging moved to 8443' });
    expect(flagged.text).toContain(`Flagged #${id} as wrong`);
    expect(await contextOf(t.owner.token, t.project)).not.toContain(title);
    expect(await contextOf(t.a.token, t.project)).not.toContain(title);
    expect(await signals(id)).toMatchObject({ wrong: 1, review: 'pending' });
    // Search still finds it, marked.
    const found = (await (
      await call(`/api/search?q=${encodeURIComponent(title)}&project=${encodeURIComponent(t.project)}`, {
        token: t.owner.token,
      })
    ).json()) as { results: { id: number; flagged?: boolean }[] };
    expect(found.results.find((r) => r.id === id)?.flagged).toBe(true);

    const q = await queue();
    expect(q.flagged.find((r) => r.id === id)).toMatchObject({
      wrong: 1,
      last: { action: 'wrong', who: t.c.user, reason: 'staging moved to 8443' },
    });
    expect((await decide(id, 'restore')).status).toBe(200);
    expect(await contextOf(t.owner.token, t.project)).toContain(title);
    expect((await queue()).flagged.some((r) => r.id === id)).toBe(false);
  });

  it('counts feedback once per person and kind', async () => {
    const id = await remember(t.a.token, t.project, `Useful note ${fresh('u')}`, 'Helps.');
    expect((await tool(t.c.token, 'feedback', { id: `#${id}`, kind: 'useful' })).text).toContain('was useful');
    expect((await tool(t.c.token, 'feedback', { id, kind: 'useful' })).text).toContain('already');
    const viaHttp = await call('/api/corrections/feedback', { token: t.owner.token, json: { id, kind: 'useful' } });
    expect(await viaHttp.json()).toEqual({ id, kind: 'useful', counted: true });
    expect(await signals(id)).toMatchObject({ useful: 2, review: null });
    const bad = await call('/api/corrections/feedback', { token: t.owner.token, json: { id, kind: 'meh' } });
    expect(bad.status).toBe(400);
    const stranger = await newIdentity();
    expect(
      (await call('/api/corrections/feedback', { token: stranger.token, json: { id, kind: 'wrong' } })).status,
    ).toBe(404);
    expect(await signals(id)).toMatchObject({ wrong: 0 });
  });

  it('ranks a record people found useful a little higher in search', async () => {
    const word = fresh('kestrel').replace(/-/g, '');
    const best = await remember(
      t.a.token,
      t.project,
      `${word} ${word} retry policy`,
      `${word} retry policy: three attempts, ${word}.`,
    );
    const next = await remember(
      t.a.token,
      t.project,
      `${word} notes`,
      `Some notes that mention ${word} once among many other words about queues and workers.`,
    );
    const order = async () =>
      (
        (await (
          await call(`/api/search?q=${word}&project=${encodeURIComponent(t.project)}`, { token: t.owner.token })
        ).json()) as { results: { id: number }[] }
      ).results.map((r) => r.id);
    expect(await order()).toEqual([best, next]);
    await tool(t.c.token, 'feedback', { id: next, kind: 'useful' });
    expect(await order()).toEqual([next, best]);
  });

  it('counts each fetch of a record by get_observations and a timeline anchored on it', async () => {
    const id = await remember(t.a.token, t.project, `Fetched note ${fresh('f')}`, 'Read me.');
    await tool(t.c.token, 'get_observations', { ids: [id] });
    await tool(t.owner.token, 'get_observations', { ids: [id, 'S999999999'] });
    await tool(t.c.token, 'timeline', { anchor: id });
    expect((await signals(id))?.fetched).toBe(3);
    // Another team's session asking for the id counts nothing.
    const stranger = await newIdentity();
    await tool(stranger.token, 'get_observations', { ids: [id] });
    expect((await signals(id))?.fetched).toBe(3);
  });
});

describe('the review queue', () => {
  it('is for admins only', async () => {
    const res = await call('/api/admin/review', { token: t.c.token });
    expect(res.status).toBe(403);
  });

  it('lists superseded records; an admin keeps one, restores another and confirms a third (forgotten for good)', async () => {
    const kept = await remember(t.a.token, t.project, `Kept ${fresh('k')}`, 'k');
    const restored = await remember(t.a.token, t.project, `Restored ${fresh('r')}`, 'r');
    const confirmed = await remember(t.a.token, t.project, `Confirmed ${fresh('c')}`, 'c');
    for (const id of [kept, restored])
      expect((await call('/api/corrections/supersede', { token: t.a.token, json: { id, reason: 'old' } })).status).toBe(
        200,
      );
    await tool(t.c.token, 'feedback', { id: confirmed, kind: 'outdated', reason: 'gone' });
    const q = await queue();
    expect(q.superseded.map((r) => r.id)).toEqual(expect.arrayContaining([kept, restored]));
    expect(q.flagged.map((r) => r.id)).toContain(confirmed);

    expect(await (await decide(kept, 'keep')).json()).toEqual({ id: kept, decision: 'keep' });
    expect((await decide(restored, 'restore')).status).toBe(200);
    expect((await decide(confirmed, 'confirm')).status).toBe(200);
    const after = await queue();
    expect(after.superseded.map((r) => r.id)).not.toContain(kept);
    expect(after.superseded.map((r) => r.id)).not.toContain(restored);
    expect(after.flagged.map((r) => r.id)).not.toContain(confirmed);
    expect(await count('SELECT count(*) AS n FROM observations WHERE id = ? AND superseded_by IS NOT NULL', kept)).toBe(
      1,
    );
    expect(await count('SELECT count(*) AS n FROM observations WHERE id = ? AND superseded_by IS NULL', restored)).toBe(
      1,
    );
    expect(await contextOf(t.owner.token, t.project)).toContain('Restored');
    expect(await count('SELECT count(*) AS n FROM observations WHERE id = ?', confirmed)).toBe(0);
    expect(await count('SELECT count(*) AS n FROM observation_events WHERE observation_id = ?', confirmed)).toBe(0);
    expect(await count('SELECT count(*) AS n FROM observation_signals WHERE observation_id = ?', confirmed)).toBe(0);
    const bad = await call(`/api/admin/review/${kept}`, { token: t.admin.token, json: { decision: 'delete' } });
    expect(bad.status).toBe(400);
    expect((await decide(999_999_999, 'keep')).status).toBe(404);
  });
});
