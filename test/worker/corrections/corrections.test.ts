// Corrections on the real stack: MCP remember/supersede through the SDK client, the HTTP routes the viewer and
// `cairn supersede` use, the context index and search a third member sees, and forget reading storage.
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
async function deferredWork(): Promise<void> {
  while (contexts.length) await waitOnExecutionContext(contexts.shift()!);
}

async function connect(token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), {
    fetch: inProcess,
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'cairn-test', version: '0.0.0' });
  await client.connect(transport);
  return client;
}

type ToolText = { content: { type: string; text: string }[]; isError?: boolean };
async function tool(token: string, name: string, args: Record<string, unknown>): Promise<ToolText> {
  const client = await connect(token);
  try {
    return (await client.callTool({ name, arguments: args })) as ToolText;
  } finally {
    await client.close();
    await deferredWork();
  }
}
const textOf = (r: ToolText) => r.content.map((c) => c.text).join('\n');
const idIn = (t: string) => Number(/#(\d+)/.exec(t)?.[1]);

async function remember(
  token: string,
  project: string,
  title: string,
  text: string,
  extra: Record<string, unknown> = {},
): Promise<number> {
  const r = await tool(token, 'remember', { project, title, text, ...extra });
  expect(r.isError, textOf(r)).toBeFalsy();
  return idIn(textOf(r));
}

const contextOf = async (token: string, project: string) =>
  (await call(`/api/context?project=${encodeURIComponent(project)}`, { token })).text();
const row = (id: number) =>
  env.DB.prepare('SELECT superseded_by FROM observations WHERE id = ?')
    .bind(id)
    .first<{ superseded_by: number | null }>();

interface Team {
  owner: TestIdentity;
  a: TestIdentity;
  c: TestIdentity;
  admin: TestIdentity;
  project: string;
}
async function team(): Promise<Team> {
  const owner = await newIdentity({ role: 'owner' });
  const [a, c, admin] = await Promise.all([
    newIdentity({ team: owner.team, role: 'member' }),
    newIdentity({ team: owner.team, role: 'member' }),
    newIdentity({ team: owner.team, role: 'admin' }),
  ]);
  return { owner, a, c, admin, project: `github.com/acme/${fresh('repo')}` };
}

let t: Team;
beforeAll(async () => {
  t = await team();
});

describe('corrections', () => {
  it("a correction by member A removes the old fact from member C's context and search ranks it below its correction", async () => {
    const word = fresh('zebrafish').replace(/-/g, '');
    const old = await remember(
      t.a.token,
      t.project,
      `Deploys run from the ${word} Jenkins box`,
      `Production deploys run from the ${word} Jenkins box.`,
    );
    expect(await contextOf(t.c.token, t.project)).toContain(`the ${word} Jenkins box`);

    const saved = await tool(t.a.token, 'remember', {
      project: t.project,
      title: `Deploys moved to GitHub Actions, ${word} box retired`,
      text: `Production deploys run from GitHub Actions; the ${word} Jenkins box is retired.`,
      supersedes: [old],
    });
    expect(textOf(saved)).toContain(`It supersedes #${old}.`);
    const fix = idIn(textOf(saved));
    expect((await row(old))?.superseded_by).toBe(fix);

    const ctx = await contextOf(t.c.token, t.project);
    expect(ctx).not.toContain(`the ${word} Jenkins box`);
    expect(ctx).toContain('Deploys moved to GitHub Actions');

    // The old record matches the query better (its title is the query), yet it ranks below its correction.
    const res = await call(
      `/api/search?q=${encodeURIComponent(`deploys ${word} Jenkins box`)}&project=${encodeURIComponent(t.project)}`,
      { token: t.c.token },
    );
    const body = (await res.json()) as { results: { id: number; superseded_by?: number }[] };
    const ids = body.results.map((r) => r.id);
    expect(ids).toContain(old);
    expect(ids.indexOf(fix)).toBeLessThan(ids.indexOf(old));
    expect(body.results.find((r) => r.id === old)?.superseded_by).toBe(fix);
    const mcpText = textOf(
      await tool(t.c.token, 'search', { query: `deploys ${word} Jenkins box`, project: t.project }),
    );
    expect(mcpText).toContain(`[superseded by #${fix}]`);
    const full = textOf(await tool(t.c.token, 'get_observations', { ids: [old] }));
    expect(full).toContain(`Status: superseded by #${fix}`);
  });

  it('lets only the author or an admin supersede; anyone else gets 403 not_allowed and nothing changes', async () => {
    const mine = await remember(
      t.a.token,
      t.project,
      `Cache TTL is ${fresh('ttl')} seconds`,
      'The cache TTL is 60 seconds.',
    );
    const res = await call('/api/corrections/supersede', {
      token: t.c.token,
      json: { id: mine, reason: 'I think it changed' },
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_allowed');
    expect((await row(mine))?.superseded_by).toBeNull();
    const viaMcp = await tool(t.c.token, 'supersede', { id: mine, reason: 'I think it changed' });
    expect(viaMcp.isError).toBe(true);
    expect(textOf(viaMcp)).toMatch(/^not_allowed:/);

    const byAdmin = await call('/api/corrections/supersede', {
      token: t.admin.token,
      json: { id: mine, reason: 'TTL is configured per route now' },
    });
    expect(byAdmin.status).toBe(200);
    expect((await row(mine))?.superseded_by).toBe(mine); // outdated, nothing in its place
    expect(await contextOf(t.c.token, t.project)).not.toContain('Cache TTL is');
  });

  it('keeps who superseded a record, when and why', async () => {
    const old = await remember(t.a.token, t.project, `Old rule ${fresh('r')}`, 'Old rule text.');
    const fix = await remember(t.a.token, t.project, `New rule ${fresh('r')}`, 'New rule text.');
    const r = await tool(t.a.token, 'supersede', {
      id: `#${old}`,
      by: fix,
      reason: 'The rule changed in the March release',
    });
    expect(textOf(r)).toContain(`#${old} is superseded by #${fix}`);
    // The correction is a version of the record (issue 38): its creation is version 1, the correction version 2.
    const h = (await (await call(`/api/corrections/history?id=${old}`, { token: t.c.token })).json()) as {
      superseded_by: number;
      versions: { version: number; action: string; by: number; who: string; reason: string; at: string }[];
    };
    expect(h.superseded_by).toBe(fix);
    expect(h.versions).toEqual([
      expect.objectContaining({ version: 1, action: 'create', who: t.a.user }),
      expect.objectContaining({
        version: 2,
        action: 'supersede',
        by: fix,
        who: t.a.user,
        reason: 'The rule changed in the March release',
        state: { superseded_by: { from: null, to: fix } },
      }),
    ]);
    expect(Date.parse(h.versions[1]!.at)).toBeGreaterThan(0);
    const audit = await env.DB.prepare(
      "SELECT detail FROM audit_log WHERE action = 'observation.supersede' AND target = ?",
    )
      .bind(`observation:${old}`)
      .first<{ detail: string }>();
    expect(audit?.detail).not.toContain('March'); // the audit row outlives a forgotten record: no reason in it
  });

  it('refuses bad corrections with stable codes and stores nothing', async () => {
    const a = await remember(t.a.token, t.project, `Rule A ${fresh('r')}`, 'A.');
    const b = await remember(t.a.token, t.project, `Rule B ${fresh('r')}`, 'B.');
    const c = await remember(t.a.token, t.project, `Rule C ${fresh('r')}`, 'C.');
    const post = (json: unknown, token = t.a.token) => call('/api/corrections/supersede', { token, json });
    const code = async (res: Response) => [res.status, ((await res.json()) as { error: { code: string } }).error.code];
    expect(await code(await post({ id: a, by: a, reason: 'x' }))).toEqual([400, 'invalid_arguments']);
    expect(await code(await post({ id: a, reason: '' }))).toEqual([400, 'invalid_body']);
    expect(await code(await post({ id: 9_999_999_999, reason: 'x' }))).toEqual([404, 'not_found']);
    expect((await post({ id: b, by: c, reason: 'c replaces b' })).status).toBe(200);
    expect(await code(await post({ id: a, by: b, reason: 'b is outdated itself' }))).toEqual([409, 'by_superseded']);
    // A correction refused for one id stores nothing, not even the new note.
    const before = await env.DB.prepare('SELECT count(*) AS n FROM observations').first<{ n: number }>();
    const other = await remember(t.c.token, t.project, `C's own ${fresh('n')}`, 'mine');
    const refused = await tool(t.c.token, 'remember', {
      project: t.project,
      text: 'A correction of A by C',
      supersedes: [a],
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^not_allowed:/);
    const after = await env.DB.prepare('SELECT count(*) AS n FROM observations').first<{ n: number }>();
    expect(after!.n).toBe(before!.n + 1);
    expect((await row(a))?.superseded_by).toBeNull();
    expect(other).toBeGreaterThan(0);
    // Another team's token cannot see the record at all.
    const stranger = await newIdentity();
    expect(await code(await post({ id: a, reason: 'x' }, stranger.token))).toEqual([404, 'not_found']);
  });

  it('forget still deletes a superseded record for good: row, history, signals and index entries', async () => {
    const word = fresh('quokka').replace(/-/g, '');
    const old = await remember(t.a.token, t.project, `Uses ${word} queue`, `We use the ${word} queue.`);
    const fix = await remember(t.a.token, t.project, 'Uses the new queue', 'We use the new queue.', {
      supersedes: [old],
    });
    await tool(t.c.token, 'get_observations', { ids: [old] });
    await call('/api/corrections/feedback', {
      token: t.c.token,
      json: { id: old, kind: 'outdated', reason: `the ${word} queue is gone` },
    });
    const count = async (sql: string, ...args: unknown[]) =>
      (await env.DB.prepare(sql)
        .bind(...args)
        .first<{ n: number }>())!.n;
    expect(await count('SELECT count(*) AS n FROM observation_events WHERE observation_id = ?', old)).toBe(2);
    expect(await count('SELECT count(*) AS n FROM observation_signals WHERE observation_id = ?', old)).toBe(1);

    const res = await call('/api/forget', { token: t.a.token, json: { kind: 'observation', id: old } });
    expect(res.status).toBe(200);
    expect(await count('SELECT count(*) AS n FROM observations WHERE id = ?', old)).toBe(0);
    expect(await count('SELECT count(*) AS n FROM observation_events WHERE observation_id = ?', old)).toBe(0);
    expect(await count('SELECT count(*) AS n FROM observation_signals WHERE observation_id = ?', old)).toBe(0);
    expect(await count('SELECT count(*) AS n FROM observations_fts WHERE observations_fts MATCH ?', `"${word}"`)).toBe(
      0,
    );
    expect(
      await count("SELECT count(*) AS n FROM local_vectors WHERE kind = 'observation' AND record_id = ?", old),
    ).toBe(0);
    expect(await count('SELECT count(*) AS n FROM audit_log WHERE detail LIKE ?', `%${word}%`)).toBe(0);
    expect((await row(fix))?.superseded_by).toBeNull();
  });
});
