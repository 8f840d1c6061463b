// The agent a session ran in: sent by the client as `platform`, stored on the session row, and usable as a
// search filter on GET /api/search and MCP search.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { env, exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { BASE, call, fresh } from '../support/http';
import { seedObservation, seedWorld } from '../support/seed';

const worker = (exports as unknown as { default: { fetch(req: Request): Promise<Response> } }).default;

async function sessionRow(sessionKey: string) {
  return env.DB.prepare('SELECT id, platform FROM sessions WHERE session_key = ?')
    .bind(sessionKey)
    .first<{ id: number; platform: string }>();
}

async function ingestInit(token: string, project: string, session: string, platform?: string): Promise<void> {
  const body: Record<string, unknown> = {
    event_id: fresh('ev'),
    session_id: session,
    project,
    cwd: '/work/widgets',
    occurred_at: Date.now(),
    prompt: 'Make the build green',
  };
  if (platform) body.platform = platform;
  const res = await call('/api/sessions/init', { token, json: body });
  expect(res.status, await res.clone().text()).toBeLessThan(300);
}

describe('platform', () => {
  it('is stored on the session as the client sent it, and defaults to claude-code for older clients', async () => {
    const w = await seedWorld();
    const gemini = fresh('gem');
    const old = fresh('old');
    await ingestInit(w.id.token, w.key, gemini, 'gemini');
    await ingestInit(w.id.token, w.key, old);
    expect((await sessionRow(gemini))?.platform).toBe('gemini');
    expect((await sessionRow(old))?.platform).toBe('claude-code');
  });

  it('filters GET /api/search and MCP search to the sessions of one agent', async () => {
    const w = await seedWorld();
    const codexSession = fresh('codex');
    await ingestInit(w.id.token, w.key, codexSession, 'codex');
    const codexId = (await sessionRow(codexSession))!.id;
    const fromClaude = await w.add({ title: 'Widget snapshot refreshed after the schema change' });
    const fromCodex = await seedObservation(w.ids, w.projectId, codexId, {
      title: 'Widget snapshot test fixed by pinning the clock',
    });
    const ids = async (platform?: string) => {
      const qs = new URLSearchParams({ q: 'widget snapshot', project: w.key });
      if (platform) qs.set('platform', platform);
      const res = await call(`/api/search?${qs}`, { token: w.id.token });
      expect(res.status).toBe(200);
      return ((await res.json()) as { results: { id: number }[] }).results.map((r) => r.id).sort();
    };
    expect(await ids()).toEqual([fromClaude, fromCodex].sort());
    expect(await ids('codex')).toEqual([fromCodex]);
    expect(await ids('claude-code')).toEqual([fromClaude]);
    expect(await ids('gemini')).toEqual([]);

    const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), {
      fetch: (url, init) => worker.fetch(new Request(url, init)),
      requestInit: { headers: { Authorization: `Bearer ${w.id.token}` } },
    });
    const client = new Client({ name: 'cairn-test', version: '0.0.0' });
    await client.connect(transport);
    const r = (await client.callTool({
      name: 'search',
      arguments: { query: 'widget snapshot', project: w.key, platform: 'codex' },
    })) as { content: { text: string }[] };
    const text = r.content.map((c) => c.text).join('\n');
    expect(text).toContain(`#${fromCodex}`);
    expect(text).not.toContain(`#${fromClaude}`);
  });
});
