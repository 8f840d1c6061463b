// `cairn mcp-stdio`: each JSON-RPC line goes to the server's /mcp with cairn's token; JSON and SSE answers come
// back as lines, a notification gets none, and an unreachable server answers the request with an error.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerLines, forward, type Bridge } from '../../src/agents/mcp-stdio';
import { deadPort } from '../support';

const seen: Array<{ headers: IncomingMessage['headers']; body: string }> = [];
let url = '';
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    seen.push({ headers: req.headers, body });
    const msg = JSON.parse(body) as { id?: number; method: string };
    if (msg.id === undefined) return void res.writeHead(202).end();
    if (msg.method === 'initialize') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(
        JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { protocolVersion: '2025-06-18', capabilities: {} } }),
      );
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { tools: [] } })}\n\n`);
  });
});

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('mcp-stdio bridge', () => {
  it('forwards each message with the token and returns JSON and SSE answers as lines', async () => {
    const bridge: Bridge = { url, token: 'tok-bridge', device: 'laptop', fetch };
    const version = { value: null as string | null };
    const init = await forward(
      bridge,
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
      version,
    );
    expect(JSON.parse(init[0]!).result.protocolVersion).toBe('2025-06-18');
    expect(
      await forward(bridge, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), version),
    ).toEqual([]);
    const list = await forward(bridge, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }), version);
    expect(list.map((l) => JSON.parse(l))).toEqual([{ jsonrpc: '2.0', id: 2, result: { tools: [] } }]);
    expect(seen[0]!.headers.authorization).toBe('Bearer tok-bridge');
    expect(seen[0]!.headers.accept).toBe('application/json, text/event-stream');
    expect(seen[0]!.headers['x-cairn-device']).toBe('laptop');
    expect(seen[2]!.headers['mcp-protocol-version']).toBe('2025-06-18');
  });

  it('answers a request with a JSON-RPC error when the server cannot be reached, and stays silent for a notification', async () => {
    const bridge: Bridge = { url: `http://127.0.0.1:${await deadPort()}`, token: 't', device: null, fetch };
    const out = await forward(bridge, JSON.stringify({ jsonrpc: '2.0', id: 'a', method: 'tools/list' }), {
      value: null,
    });
    expect(JSON.parse(out[0]!)).toMatchObject({ id: 'a', error: { code: -32000 } });
    expect(
      await forward(bridge, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), { value: null }),
    ).toEqual([]);
  });

  it('reads every data event of an SSE body and nothing of an empty one', () => {
    expect(answerLines('text/event-stream', 'event: message\ndata: {"a":1}\n\ndata: {"b":2}\n\n')).toEqual([
      '{"a":1}',
      '{"b":2}',
    ]);
    expect(answerLines('application/json', '')).toEqual([]);
  });
});
