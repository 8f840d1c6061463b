// MCP transport conventions and per-call limits: 405 for GET/DELETE, the Origin check, tool annotations,
// JSON-RPC batches counted call by call, rate-limit headers on /mcp answers, deep bodies refused.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { BASE, call, fresh } from '../support/http';
import { addTeammate, errorCode, json, newOwner } from '../teams/support';

const worker = (exports as unknown as { default: { fetch(req: Request): Promise<Response> } }).default;
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const toolsCall = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'search', arguments: { query: `q${id}` } },
});

const postMcp = (token: string, body: unknown, headers: Record<string, string> = {}) =>
  call('/mcp', {
    token,
    method: 'POST',
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { ...MCP_HEADERS, ...headers },
  });

describe('MCP transport', () => {
  it('answers GET and DELETE /mcp with 405 and Allow: POST instead of holding a stream open', async () => {
    const owner = await newOwner();
    for (const method of ['GET', 'DELETE']) {
      const res = await call('/mcp', { token: owner.token, method, headers: { accept: 'text/event-stream' } });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(await errorCode(res)).toBe('method_not_allowed');
    }
  });

  it('refuses a browser page of another origin with 403 and serves the same call without an Origin header or from its own origin', async () => {
    const owner = await newOwner();
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const foreign = await postMcp(owner.token, init, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(await errorCode(foreign)).toBe('origin_not_allowed');
    const nullOrigin = await postMcp(owner.token, init, { origin: 'null' });
    expect(nullOrigin.status).toBe(403);
    await nullOrigin.arrayBuffer();
    const cli = await postMcp(owner.token, init);
    expect(cli.status).toBe(200);
    await cli.arrayBuffer();
    const own = await postMcp(owner.token, init, { origin: BASE });
    expect(own.status).toBe(200);
    await own.arrayBuffer();
  });

  it('annotates every tool: reads read-only and closed-world, remember idempotent and not destructive, forget destructive and idempotent', async () => {
    const owner = await newOwner();
    const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), {
      fetch: (url, init) => worker.fetch(new Request(url, init)),
      requestInit: { headers: { Authorization: `Bearer ${owner.token}` } },
    });
    const client = new Client({ name: 'annotations', version: '0' });
    await client.connect(transport);
    const { tools } = await client.listTools();
    const by = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    for (const name of ['search', 'timeline', 'get_observations'])
      expect(by[name], name).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    expect(by.remember).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(by.forget).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    });
    await client.close();
  });

  it('puts rate-limit headers on /mcp answers', async () => {
    const owner = await newOwner();
    const res = await postMcp(owner.token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('x-ratelimit-limit'))).toBeGreaterThan(0);
    expect(res.headers.get('x-ratelimit-remaining')).not.toBeNull();
    await res.arrayBuffer();
  });

  it('refuses a JSON-RPC batch of more than 10 messages with 400 batch_too_large', async () => {
    const owner = await newOwner();
    const res = await postMcp(
      owner.token,
      Array.from({ length: 11 }, (_, i) => toolsCall(i + 1)),
    );
    expect(res.status).toBe(400);
    expect(await errorCode(res)).toBe('batch_too_large');
  });

  it('counts each JSON-RPC call of a batch: 8 calls under a read limit of 5 per minute are refused with 429', async () => {
    const owner = await newOwner();
    await json(
      await call('/api/admin/settings', { token: owner.token, method: 'PATCH', json: { rate_limit_read_per_min: 5 } }),
    );
    const bob = await addTeammate(owner, fresh('bob'));
    const batch = Array.from({ length: 8 }, (_, i) => toolsCall(i + 1));
    const res = await postMcp(bob.token, batch);
    expect(res.status).toBe(429);
    expect(await errorCode(res)).toBe('rate_limited');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // A batch that fits the budget is served: 1 (already charged) + 2 + 2 ≤ 5.
    const small = await postMcp(bob.token, [toolsCall(1), toolsCall(2)]);
    expect(small.status).toBe(200);
    const answers = (await small.json()) as unknown[];
    expect(answers).toHaveLength(2);
    const again = await postMcp(bob.token, [toolsCall(3), toolsCall(4)]);
    expect(again.status).toBe(200);
    await again.arrayBuffer();
    const over = await postMcp(bob.token, toolsCall(5));
    expect(over.status).toBe(429);
    await over.arrayBuffer();
  });

  it('refuses an /mcp body nested 50,000 arrays deep with 400 json_too_deep', async () => {
    const owner = await newOwner();
    const deep = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":${'['.repeat(50_000)}${']'.repeat(50_000)}}}}`;
    const res = await postMcp(owner.token, deep);
    expect(res.status).toBe(400);
    expect(await errorCode(res)).toBe('json_too_deep');
  });

  it('answers malformed JSON on /mcp with 400 malformed_json', async () => {
    const owner = await newOwner();
    const res = await postMcp(owner.token, '{"jsonrpc": ');
    expect(res.status).toBe(400);
    expect(await errorCode(res)).toBe('malformed_json');
  });
});
