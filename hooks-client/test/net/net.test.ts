// The hand-rolled HTTP/1.1 client (node:net) against a real node:http server, its pure parser, and the crypto-free ids.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, Unreachable } from '../../src/net/http';
import { parseResponse } from '../../src/net/http1';
import { randomId, sha256Hex } from '../../src/util/ids';

let server: Server;
let base = '';
const seen: Array<{ method: string; url: string; headers: Record<string, unknown>; body: string }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const u = new URL(req.url ?? '/', 'http://x');
      if (u.pathname === '/chunked') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('héllo ');
        setTimeout(() => res.end('wörld'), 20);
      } else if (u.pathname === '/big') {
        res.writeHead(200, { 'content-length': '100000' });
        res.end('x'.repeat(100_000));
      } else if (u.pathname === '/slow') {
        setTimeout(() => res.end('late'), 2_000);
      } else if (u.pathname === '/empty') {
        res.writeHead(204);
        res.end();
      } else {
        res.writeHead(202, { 'content-type': 'application/json', 'x-cairn-client-version': '1.2.3' });
        res.end(JSON.stringify({ accepted: true, echo: body.length }));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('call over node:net', () => {
  it('posts JSON with the bearer token and device and reads status, headers and body', async () => {
    const r = await call(base, '/api/sessions/observations?x=1', {
      token: 'tok',
      device: 'laptop',
      body: { a: 'é'.repeat(10) },
      timeoutMs: 2_000,
    });
    expect(r.status).toBe(202);
    expect(r.headers['x-cairn-client-version']).toBe('1.2.3');
    expect(JSON.parse(r.text)).toEqual({ accepted: true, echo: JSON.stringify({ a: 'é'.repeat(10) }).length });
    const got = seen.at(-1)!;
    expect(got).toMatchObject({ method: 'POST', url: '/api/sessions/observations?x=1' });
    expect(got.headers).toMatchObject({
      authorization: 'Bearer tok',
      'x-cairn-device': 'laptop',
      'content-type': 'application/json',
    });
  });

  it('decodes a chunked answer that arrives in pieces', async () => {
    const r = await call(base, '/chunked', { timeoutMs: 2_000 });
    expect(r).toMatchObject({ status: 200, text: 'héllo wörld' });
  });

  it('keeps at most maxBytes of a long answer', async () => {
    const r = await call(base, '/big', { timeoutMs: 2_000, maxBytes: 1_000 });
    expect(r.text).toHaveLength(1_000);
  });

  it('answers 204 without a body', async () => {
    expect(await call(base, '/empty', { timeoutMs: 2_000 })).toMatchObject({ status: 204, text: '' });
  });

  it('gives up at the deadline and on a closed port, as Unreachable', async () => {
    // The server answers `/slow` after 2 s: rejecting (instead of reading "late") shows the 150 ms deadline won.
    await expect(call(base, '/slow', { timeoutMs: 150 })).rejects.toBeInstanceOf(Unreachable);
    await expect(call('http://127.0.0.1:1', '/x', { timeoutMs: 1_000 })).rejects.toMatchObject({
      name: 'Unreachable',
      reason: 'ECONNREFUSED',
    });
  });

  it('refuses a token that would split the request', async () => {
    await expect(call(base, '/x', { token: 'a\r\nx-evil: 1', timeoutMs: 1_000 })).rejects.toThrow(/invalid character/);
  });
});

describe('parseResponse', () => {
  const b = (s: string) => Buffer.from(s, 'latin1');
  it('waits for the whole head and the announced length', () => {
    expect(parseResponse(b('HTTP/1.1 200 OK\r\ncontent-length: 5\r\n'), { ended: false, maxBytes: 100 })).toBe(
      'incomplete',
    );
    expect(parseResponse(b('HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nabc'), { ended: false, maxBytes: 100 })).toBe(
      'incomplete',
    );
    expect(
      parseResponse(b('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabcde'), { ended: false, maxBytes: 100 }),
    ).toMatchObject({ status: 200, text: 'abcde' });
  });
  it('skips a 100 Continue and reads a body without length up to the close', () => {
    const raw = b('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nx-a: 1\r\n\r\nnope');
    expect(parseResponse(raw, { ended: false, maxBytes: 100 })).toBe('incomplete');
    expect(parseResponse(raw, { ended: true, maxBytes: 100 })).toMatchObject({
      status: 404,
      text: 'nope',
      headers: { 'x-a': '1' },
    });
  });
  it('decodes chunks with extensions and stops at the last chunk', () => {
    const raw = b('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\n\r\n');
    expect(parseResponse(raw, { ended: false, maxBytes: 100 })).toMatchObject({ text: 'abcde' });
    expect(parseResponse(raw.subarray(0, raw.length - 7), { ended: false, maxBytes: 100 })).toBe('incomplete');
  });
  it('calls garbage malformed', () => {
    expect(parseResponse(b('SSH-2.0-OpenSSH\r\n\r\n'), { ended: false, maxBytes: 100 })).toBe('malformed');
    expect(
      parseResponse(b('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n'), { ended: false, maxBytes: 100 }),
    ).toBe('malformed');
  });
});

describe('ids without node:crypto', () => {
  it('hashes like createHash("sha256") across block boundaries and non-ASCII text', () => {
    for (const s of [
      '',
      'abc',
      'a'.repeat(55),
      'a'.repeat(56),
      'a'.repeat(64),
      'é😀\u0000x'.repeat(1000),
      randomBytes(5000).toString('latin1'),
    ]) {
      expect(sha256Hex(s)).toBe(createHash('sha256').update(s).digest('hex'));
    }
  });
  it('makes distinct v4 UUIDs', () => {
    const ids = new Set(Array.from({ length: 2_000 }, randomId));
    expect(ids.size).toBe(2_000);
    for (const id of [...ids].slice(0, 50))
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
