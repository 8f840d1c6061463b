// Evidence wherever a record is used (issue 34), on real D1 and Durable Objects: search and MCP (search, timeline,
// get_observations) carry `evidence: <value>` on each record's line and in structured content, judged against the
// calling device's last reported checkout, a gone record ranks last; file context judges notes against the file
// being read; prompt context leaves gone notes out; a tool event's file ids are stored with the record and what
// the turn saw updates the device's checkout until its next report.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import worker from '../../../src/index';
import { canonicalEntries, evidenceKey, fileEntry, fileKey, type CheckoutEntries } from '../../../src/shared/evidence';
import { sha256Hex } from '../../../src/lib/crypto';
import { BASE, call, fresh, newIdentity, type TestIdentity } from '../support/http';
import { idsOf, seedProject, seedSession } from '../support/seed';
import { script, send, settled, waitFor } from '../pipeline/support';
import { blob, seedCited } from './support';
import { json, remember, send as sendAs } from '../versions/support';

const T0 = Date.parse('2026-06-02T09:00:00Z');
const A = blob('a');
const B = blob('b');

async function connect(token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), {
    fetch: async (url, init) => worker.fetch(new Request(url, init), env, createExecutionContext()),
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'cairn-evidence-test', version: '0.0.0' });
  await client.connect(transport);
  return client;
}

type ToolResult = {
  content: { text: string }[];
  structuredContent?: Record<string, { ref: string; evidence: string; reasons: string[]; missing_names: string[] }[]>;
};
const tool = async (c: Client, name: string, args: Record<string, unknown>) =>
  (await c.callTool({ name, arguments: args })) as ToolResult;

async function report(me: TestIdentity, key: string, state: CheckoutEntries): Promise<void> {
  const digest = await sha256Hex(canonicalEntries(state));
  const res = await call('/api/context', { token: me.token, json: { project: key, checkout: { digest, set: state } } });
  expect(res.status).toBe(200);
}

/** Three zebra records: one on a file that changed (its name gone), one on a deleted file, one current. */
async function zebras() {
  const me = await newIdentity();
  const ids = await idsOf(me);
  const key = `github.com/acme/${fresh('repo')}`;
  const projectId = await seedProject(ids, key);
  const session = await seedSession(ids, projectId, fresh('s'), T0);
  const rows = {
    gone: await seedCited(ids, projectId, session, {
      title: 'Zebra stripes come from stripeTheme',
      files: [{ path: 'src/stripes.ts', blob: A, kind: 'read' }],
      createdAt: T0 + 3 * 60_000,
    }),
    changed: await seedCited(ids, projectId, session, {
      title: 'Zebra renderer calls paintZebra first',
      files: [{ path: 'src/render.ts', blob: A, kind: 'modified' }],
      createdAt: T0 + 2 * 60_000,
    }),
    current: await seedCited(ids, projectId, session, {
      title: 'Zebra colours live in the theme',
      files: [{ path: 'src/theme.ts', blob: A, kind: 'read' }],
      createdAt: T0 + 60_000,
    }),
  };
  await report(me, key, {
    [fileKey('src/stripes.ts')]: '-',
    [fileKey('src/render.ts')]: fileEntry({ blob: B, missing: [evidenceKey('paintZebra')] }),
    [fileKey('src/theme.ts')]: fileEntry({ blob: A, missing: [] }),
  });
  return { me, ids, key, projectId, session, rows };
}

describe('evidence in search and MCP answers', () => {
  it('ranks a gone record last in search and gives each observation its evidence', async () => {
    const z = await zebras();
    const res = await call(`/api/search?q=zebra&project=${encodeURIComponent(z.key)}`, { token: z.me.token });
    const body = (await res.json()) as { results: { id: number; evidence?: { value: string } }[] };
    expect(body.results.map((r) => r.id).at(-1)).toBe(z.rows.gone);
    const byId = new Map(body.results.map((r) => [r.id, r.evidence?.value]));
    expect(byId.get(z.rows.gone)).toBe('gone');
    expect(byId.get(z.rows.changed)).toBe('changed');
    expect(byId.get(z.rows.current)).toBe('current');
  });

  it('puts evidence on every MCP search, timeline and get_observations record line and in structured content', async () => {
    const z = await zebras();
    const c = await connect(z.me.token);
    const search = await tool(c, 'search', { query: 'zebra', project: z.key });
    const line = (id: number) => search.content[0]!.text.split('\n').find((l) => l.startsWith(`#${id} `))!;
    expect(line(z.rows.changed)).toMatch(/evidence: changed \(code changed: paintZebra no longer in the code\)$/);
    expect(line(z.rows.gone)).toMatch(/evidence: gone$/);
    expect(line(z.rows.current)).toMatch(/evidence: current$/);
    expect(search.structuredContent?.results).toContainEqual({
      ref: `#${z.rows.changed}`,
      evidence: 'changed',
      reasons: ['code_changed', 'names_missing'],
      missing_names: ['paintZebra'],
    });

    const timeline = await tool(c, 'timeline', { anchor: z.rows.changed });
    expect(timeline.content[0]!.text.split('\n').find((l) => l.startsWith(`${z.rows.gone} `))).toMatch(
      /evidence: gone/,
    );
    expect(timeline.structuredContent?.items).toContainEqual(
      expect.objectContaining({ ref: `#${z.rows.current}`, evidence: 'current' }),
    );

    const full = await tool(c, 'get_observations', { ids: [z.rows.changed, z.rows.current] });
    expect(full.content[0]!.text).toContain('Evidence: changed (code changed: paintZebra no longer in the code)');
    expect(full.structuredContent?.records.map((r) => r.evidence)).toEqual(['changed', 'current']);
  });

  it('says unknown to a device that never reported its checkout', async () => {
    const z = await zebras();
    const mate = await newIdentity({ team: z.me.team });
    const c = await connect(mate.token);
    const full = await tool(c, 'get_observations', { ids: [z.rows.gone] });
    expect(full.content[0]!.text).toContain('Evidence: unknown');
    expect(full.structuredContent?.records[0]).toMatchObject({ evidence: 'unknown', reasons: ['no_checkout'] });
  });
});

describe('evidence in file and prompt context', () => {
  it('marks notes on a file that changed since they were written, judged by the file being read', async () => {
    const z = await zebras();
    const path = 'src/render.ts';
    const ask = async (extra: Record<string, string>) =>
      (
        await call(`/api/context/file?${new URLSearchParams({ project: z.key, path, ...extra })}`, {
          token: z.me.token,
        })
      ).text();
    expect(await ask({ blob: B })).toMatch(new RegExp(`^${z.rows.changed} .*\\(code changed`, 'm'));
    const same = await ask({ blob: A });
    expect(same).toMatch(new RegExp(`^${z.rows.changed} `, 'm'));
    expect(same).not.toContain('code changed');
    // A newer client's file ids replace the mtime rule: a newer mtime no longer withholds current notes.
    expect(await ask({ blob: A, mtime: String(Date.now()) })).toMatch(new RegExp(`^${z.rows.changed} `, 'm'));
  });

  it('leaves a gone note out of the prompt context', async () => {
    const z = await zebras();
    const text = await (
      await call(`/api/context/prompt?${new URLSearchParams({ project: z.key, q: 'zebra stripes theme renderer' })}`, {
        token: z.me.token,
      })
    ).text();
    expect(text).toMatch(new RegExp(`^- ${z.rows.changed} .*\\(code changed`, 'm'));
    expect(text).not.toMatch(new RegExp(`^- ${z.rows.gone} `, 'm'));
  });
});

describe('evidence from tool events', () => {
  it('stores the ids a tool event sent with the record’s file rows and lays what the turn saw over the device’s checkout', {
    timeout: 30_000,
  }, async () => {
    const me = await newIdentity();
    const key = `github.com/acme/${fresh('repo')}`;
    const sid = fresh('s');
    const scenario = fresh('ev');
    await script(scenario, []);
    const ids = await idsOf(me);
    // The device reported config.ts at blob A before the session.
    const projectId = await seedProject(ids, key);
    await report(me, key, { [fileKey('src/config.ts')]: fileEntry({ blob: A, missing: [] }) });
    const event = {
      session_id: sid,
      project: key,
      cwd: '/home/dev/widgets',
      project_root: '/home/dev/widgets',
      occurred_at: Date.now(),
      event_id: fresh('ev'),
      tool_name: 'Edit',
      tool_input: { file_path: '/home/dev/widgets/src/config.ts', old_string: 'a', new_string: `b ${scenario}` },
      tool_response: `SCENARIO:${scenario} edited`,
      tool_use_id: fresh('tu'),
      file_ids: [{ path: 'src/config.ts', blob: B, ws: 'c'.repeat(16), base: A }],
    };
    expect((await send(me.token, 'observations', event)).status).toBe(202);
    await waitFor(me.token, sid, (s) => settled(s) && s.observations_stored >= 1);
    const rows = await env.DB.prepare(
      `SELECT f.observation_id AS id, f.path, f.kind, f.blob, f.ws, f.base FROM observation_files f
         JOIN observations o ON o.id = f.observation_id JOIN sessions s ON s.id = o.session_id WHERE s.session_key = ?`,
    )
      .bind(sid)
      .all<{ id: number; path: string; kind: string; blob: string; ws: string; base: string }>();
    expect(rows.results).toContainEqual(
      expect.objectContaining({ path: 'src/config.ts', kind: 'modified', blob: B, ws: 'c'.repeat(16), base: A }),
    );
    const overlay = await env.DB.prepare('SELECT overlay FROM checkouts WHERE team_id = ? AND project_id = ?')
      .bind(ids.teamId, projectId)
      .first<{ overlay: string }>();
    expect(JSON.parse(overlay!.overlay)).toEqual({ [fileKey('src/config.ts')]: `${B}:${'c'.repeat(16)}:?` });
    // The record of the edit is current for this device: its checkout now holds what the edit left.
    const c = await connect(me.token);
    const full = await tool(c, 'get_observations', { ids: [rows.results[0]!.id] });
    expect(full.structuredContent?.records[0]?.evidence).toBe('current');
  });

  it('takes an edited record’s names from its new text, so evidence checks the identifiers it names now', async () => {
    const me = await newIdentity();
    const project = `github.com/acme/${fresh('names')}`;
    const id = await remember(me.token, project, 'Start-up order', 'Call parseConfig before loadPlugins.');
    const names = async () =>
      JSON.parse(
        (await env.DB.prepare('SELECT names FROM observations WHERE id = ?').bind(id).first<{ names: string }>())!
          .names,
      ) as string[];
    expect(await names()).toEqual(expect.arrayContaining(['parseConfig', 'loadPlugins']));
    await json(
      await sendAs('/api/corrections/edit', {
        token: me.token,
        json: { id, narrative: 'Call readSettings first.', reason: 'renamed' },
      }),
    );
    const after = await names();
    expect(after).toContain('readSettings');
    expect(after).not.toContain('parseConfig');
  });

  it.each([
    ['an absolute path', { path: '/etc/passwd', blob: A }],
    ['a path leaving the root', { path: '../x.ts', blob: A }],
    ['a blob that is not an id', { path: 'a.ts', blob: 'HEAD' }],
  ])('refuses a tool event whose file ids name %s with 400 invalid_body', async (_what, id) => {
    const me = await newIdentity();
    const res = await send(me.token, 'observations', {
      session_id: fresh('s'),
      project: 'github.com/acme/widgets',
      occurred_at: Date.now(),
      event_id: fresh('ev'),
      tool_name: 'Read',
      tool_input: { file_path: 'a.ts' },
      file_ids: [id],
    });
    expect(res.status).toBe(400);
    expect((res.body.error as { code: string }).code).toBe('invalid_body');
  });
});
