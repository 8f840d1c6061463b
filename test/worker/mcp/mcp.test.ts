// MCP over Streamable HTTP with the official SDK client, calling the Worker in-process: every tool, and auth.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { BASE, fresh, newIdentity, type TestIdentity, forgetTokenMemo } from '../support/http';
import worker from '../../../src/index';
import { storePrompt } from '../../../src/store/sessions';
import { idsOf, seedObservation, seedProject, seedSession, seedSummary, type Ids } from '../support/seed';

// Each request gets its own execution context, so a test can wait for the work the server deferred with
// waitUntil (vector indexing after remember) instead of polling for its effect.
const contexts: ExecutionContext[] = [];
const inProcess = async (url: string | URL, init?: RequestInit): Promise<Response> => {
  const ctx = createExecutionContext();
  contexts.push(ctx);
  return worker.fetch(new Request(url, init), env, ctx);
};
/** Waits until everything the server deferred so far has finished. */
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
const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as ToolText;
const textOf = (r: ToolText) => r.content.map((c) => c.text).join('\n');

const T0 = Date.parse('2026-07-01T10:00:00Z');

const hasVector = async (id: number) =>
  (await env.DB.prepare("SELECT 1 AS x FROM local_vectors WHERE record_id = ? AND kind = 'observation'")
    .bind(id)
    .first()) !== null;
let me: TestIdentity;
let ids: Ids;
let key: string;
let project: number;
let seeded: number[];

beforeAll(async () => {
  me = await newIdentity();
  ids = await idsOf(me);
  key = `github.com/acme/${fresh('repo')}`;
  project = await seedProject(ids, key);
  const s = await seedSession(ids, project, fresh('s'), T0);
  seeded = [];
  const titles = [
    'Webhook retries use exponential backoff',
    'Stripe signature check moved before JSON parse',
    'Queue consumer acks only after commit',
  ];
  for (const [i, title] of titles.entries()) {
    seeded.push(
      await seedObservation(ids, project, s, {
        title,
        narrative: `Details about ${title.toLowerCase()}.`,
        facts: [`fact ${i}`],
        createdAt: T0 + i * 60_000,
      }),
    );
  }
});

describe('MCP server', () => {
  it('initializes with our instructions and lists the eleven tools', async () => {
    const client = await connect(me.token);
    expect(client.getServerVersion()?.name).toBe('cairn');
    expect(client.getInstructions()).toContain('search(query)');
    expect(client.getInstructions()).toContain('get_observations');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'continue_session',
      'edit',
      'feedback',
      'forget',
      'get_observations',
      'history',
      'remember',
      'revert',
      'search',
      'supersede',
      'timeline',
    ]);
    await client.close();
  });

  it('searches and returns an index line per match, not the bodies', async () => {
    const client = await connect(me.token);
    const res = await call(client, 'search', { query: 'webhook backoff', project: key });
    expect(res.isError).toBeFalsy();
    const text = textOf(res);
    expect(text).toContain(`#${seeded[0]}`);
    expect(text).toContain('Webhook retries use exponential backoff');
    expect(text).not.toContain('Details about');
  });

  it('searches summaries and prompts with kind "all", shows S and P ids, and reads them in full with get_observations', async () => {
    const s = await seedSession(ids, project, fresh('s'), T0);
    const summaryId = await seedSummary(ids, project, s, {
      request: 'Tune the albatross limiter',
      learned: 'Albatross limiter counts per token',
      nextSteps: 'Watch albatross 429s',
    });
    await storePrompt(env.DB, {
      teamId: ids.teamId,
      projectId: project,
      sessionDbId: s,
      promptNumber: 1,
      text: 'why does the albatross limiter reject bursts?',
      authorUserId: ids.userId,
      createdAt: T0,
    });
    const promptId = (await env.DB.prepare('SELECT id FROM prompts WHERE session_id = ?')
      .bind(s)
      .first<{ id: number }>())!.id;
    const client = await connect(me.token);
    const plain = textOf(await call(client, 'search', { query: 'albatross limiter' }));
    expect(plain).toMatch(/^No matches/);
    const all = textOf(await call(client, 'search', { query: 'albatross limiter', kind: 'all' }));
    expect(all).toMatch(
      new RegExp(`^S${summaryId}  .*  summary  Tune the albatross limiter  \\(${key}, @${me.user}, ~\\d+ tok\\)$`, 'm'),
    );
    expect(all).toMatch(new RegExp(`^P${promptId}  .*  prompt  why does the albatross limiter reject bursts\\?`, 'm'));
    const full = textOf(
      await call(client, 'get_observations', { ids: [`S${summaryId}`, `P${promptId}`, 'S987654321', seeded[0]!] }),
    );
    expect(full).toContain(`S${summaryId} session summary`);
    expect(full).toContain('Learned: Albatross limiter counts per token');
    expect(full).toContain('Next steps: Watch albatross 429s');
    expect(full).toContain(`P${promptId} prompt 1`);
    expect(full).toContain('why does the albatross limiter reject bursts?');
    expect(full).toContain(`#${seeded[0]} `);
    expect(full).toContain('Not found: S987654321');
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'get_observations')?.description).toContain('timeline(anchor="S12")');
    expect(client.getInstructions()).toContain('kind="all"');
    await client.close();
  });

  it('shows a timeline around an anchor and picks one from a query', async () => {
    const client = await connect(me.token);
    const byId = textOf(await call(client, 'timeline', { anchor: seeded[1], before: 1, after: 1 }));
    expect(byId).toContain(`Timeline around #${seeded[1]}: 3 entries`);
    expect(byId).toMatch(new RegExp(`${seeded[1]} .*<= anchor`));
    const byQuery = textOf(await call(client, 'timeline', { query: 'Stripe signature', before: 0, after: 0 }));
    expect(byQuery).toContain('Stripe signature check moved before JSON parse');
    const bad = await call(client, 'timeline', { anchor: '123abc' });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toContain('invalid_anchor');
  });

  it('returns full records for the ids asked and names the ones not found', async () => {
    const client = await connect(me.token);
    const text = textOf(await call(client, 'get_observations', { ids: [seeded[2], 99999999] }));
    expect(text).toContain(`#${seeded[2]}`);
    expect(text).toContain('Details about queue consumer acks only after commit.');
    expect(text).toContain('- fact 2');
    expect(text).toContain('Not found: #99999999');
  });

  it('remembers an explicit note in a manual session, once, searchable right away', async () => {
    const client = await connect(me.token);
    const note = 'Releases are cut from the release/* branches; main is never tagged directly. 发布分支';
    const first = textOf(
      await call(client, 'remember', {
        project: key,
        text: note,
        type: 'decision',
        concepts: ['why-it-exists'],
        files: ['./RELEASING.md'],
      }),
    );
    const id = Number(/#(\d+)/.exec(first)![1]);
    expect(first).toContain(`Remembered as #${id} in ${key}`);
    const again = textOf(
      await call(client, 'remember', { project: key, text: note, type: 'decision', concepts: ['why-it-exists'] }),
    );
    expect(again).toContain(`Already remembered as #${id}`);

    const row = await env.DB.prepare(
      `SELECT o.source, o.type, o.cjk_terms, o.files_read, s.session_key, s.user_id FROM observations o JOIN sessions s ON s.id = o.session_id WHERE o.id = ?`,
    )
      .bind(id)
      .first<{
        source: string;
        type: string;
        cjk_terms: string;
        files_read: string;
        session_key: string;
        user_id: number;
      }>();
    expect(row).toMatchObject({
      source: 'remember',
      type: 'decision',
      files_read: '["RELEASING.md"]',
      session_key: `manual:${project}:${ids.userId}`,
      user_id: ids.userId,
    });
    expect(row!.cjk_terms).toContain('发布');
    const found = textOf(await call(client, 'search', { query: '发布', project: key }));
    expect(found).toContain(`#${id}`);
    await deferredWork();
    expect(await hasVector(id)).toBe(true);
  });

  it('refuses to remember with a type the mode does not know', async () => {
    const client = await connect(me.token);
    const res = await call(client, 'remember', { project: key, text: 'x', type: 'rumour' });
    expect(res.isError).toBe(true);
    expect(textOf(res)).toContain('invalid_type');
  });

  it('lets the author forget, writes an audit row, and hides the row everywhere afterwards', async () => {
    const client = await connect(me.token);
    const saved = textOf(
      await call(client, 'remember', { project: key, text: 'Temporary note about flaky CI runners' }),
    );
    const id = Number(/#(\d+)/.exec(saved)![1]);
    await deferredWork();
    expect(await hasVector(id)).toBe(true);
    const res = await call(client, 'forget', { id, reason: 'wrong' });
    expect(res.isError).toBeFalsy();
    expect(textOf(res)).toContain(`Forgot #${id}`);
    expect(await env.DB.prepare('SELECT id FROM observations WHERE id = ?').bind(id).first()).toBeNull();
    const audit = await env.DB.prepare(`SELECT actor_user_id, action, detail FROM audit_log WHERE target = ?`)
      .bind(`observation:${id}`)
      .all<{ actor_user_id: number; action: string; detail: string }>();
    expect(audit.results).toHaveLength(1);
    expect(audit.results[0]).toMatchObject({ actor_user_id: ids.userId, action: 'forget' });
    // The reason is not kept: it could repeat what was forgotten.
    expect(audit.results[0]!.detail).not.toContain('wrong');
    expect(textOf(await call(client, 'get_observations', { ids: [id] }))).toContain(`Not found: #${id}`);
    await deferredWork();
    expect(await hasVector(id)).toBe(false);
    const twice = await call(client, 'forget', { id });
    expect(twice.isError).toBe(true);
    expect(textOf(twice)).toContain('not_found');
  });

  it("refuses a member forgetting a teammate's observation, but lets a team admin", async () => {
    const member = await newIdentity({ team: me.team });
    const id = await seedObservation(ids, project, await seedSession(ids, project, fresh('s')), {
      title: 'Owner wrote this',
    });
    const asMember = await call(await connect(member.token), 'forget', { id });
    expect(asMember.isError).toBe(true);
    expect(textOf(asMember)).toContain('not_allowed');
    expect(await env.DB.prepare('SELECT id FROM observations WHERE id = ?').bind(id).first()).not.toBeNull();

    const memberIds = await idsOf(member);
    const theirs = await seedObservation(memberIds, project, await seedSession(memberIds, project, fresh('s')), {
      title: 'Member wrote this',
    });
    const asOwner = await call(await connect(me.token), 'forget', { id: theirs });
    expect(asOwner.isError).toBeFalsy();
  });

  it("answers another team's ids exactly like missing ones", async () => {
    const stranger = await connect((await newIdentity()).token);
    const foreign = await call(stranger, 'forget', { id: seeded[0] });
    const missing = await call(stranger, 'forget', { id: 99999999 });
    expect(textOf(foreign).replace(String(seeded[0]), 'N')).toBe(textOf(missing).replace('99999999', 'N'));
    expect(textOf(await call(stranger, 'get_observations', { ids: [seeded[0]] }))).toContain(
      `Not found: #${seeded[0]}`,
    );
    expect(textOf(await call(stranger, 'search', { query: 'webhook' }))).not.toContain(`#${seeded[0]}`);
  });

  it('refuses a token without the ingest scope for remember and forget, but still serves reads', async () => {
    const reader = await newIdentity({ team: me.team });
    await env.DB.prepare(
      `UPDATE tokens SET scopes = 'read' WHERE user_id = (SELECT id FROM users WHERE team_id = ? AND handle = ?)`,
    )
      .bind(ids.teamId, reader.user)
      .run();
    forgetTokenMemo();
    const client = await connect(reader.token);
    const res = await call(client, 'remember', { project: key, text: 'nope' });
    expect(res.isError).toBe(true);
    expect(textOf(res)).toContain('insufficient_scope');
    expect(textOf(await call(client, 'get_observations', { ids: [seeded[0]] }))).toContain(`#${seeded[0]}`);
  });

  it('refuses a bad token at the HTTP layer, before any MCP exchange', async () => {
    await expect(connect('cairn_not_a_real_token')).rejects.toThrow();
    const res = await inProcess(`${BASE}/mcp`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer cairn_not_a_real_token',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('invalid_token');
  });
});
