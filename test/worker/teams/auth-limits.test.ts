// Token handling at the edge: header-only tokens, scopes per route, per-token rate limits, /mcp body cap.
import { describe, expect, it } from 'vitest';
import { DEFAULT_RATE_LIMITS as DEFAULT_LIMITS } from '../../../src/config';
import { bucketFor, limitFor } from '../../../src/limits/rate-limit';
import { take } from '../../../src/limits/window';
import { call, fresh } from '../support/http';
import { addTeammate, errorCode, json, newOwner } from './support';

describe('tokens travel only in the Authorization header', () => {
  it('refuses a token in the query string with token_in_url, even next to a valid header', async () => {
    const owner = await newOwner();
    for (const path of [
      `/api/projects?token=${owner.token}`,
      `/api/search?q=x&access_token=${owner.token}`,
      `/mcp?api_key=abc`,
    ]) {
      const res = await call(path, { token: path.startsWith('/mcp') ? undefined : owner.token });
      expect(res.status, path).toBe(400);
      expect(await errorCode(res)).toBe('token_in_url');
    }
  });

  it('treats an unknown token the same on every route', async () => {
    for (const path of ['/api/projects', '/api/admin/users', '/api/sessions/x/status']) {
      const res = await call(path, { token: 'cairn_notARealTokenAtAll000000000000000000' });
      expect(res.status).toBe(401);
      expect(await errorCode(res)).toBe('invalid_token');
    }
  });
});

describe('scopes', () => {
  it('does not let an ingest-only token read context, search, timelines or MCP', async () => {
    const owner = await newOwner();
    const dev = await addTeammate(owner, fresh('ci'), { scopes: ['ingest'] });
    const mcpInit = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const reads: [string, RequestInit & { json?: unknown }][] = [
      ['/api/context?project=github.com/a/b', {}],
      ['/api/search?q=anything', {}],
      ['/api/timeline?anchor=1', {}],
      ['/api/observations?ids=1', {}],
      ['/api/projects', {}],
      ['/mcp', { method: 'POST', json: mcpInit, headers: { accept: 'application/json, text/event-stream' } }],
    ];
    for (const [path, init] of reads) {
      const res = await call(path, { ...init, token: dev.token });
      expect(res.status, path).toBe(403);
      expect(await errorCode(res)).toBe('insufficient_scope');
    }
  });
});

describe('rate limits', () => {
  it('counts requests in one-minute windows and refuses past the limit until the window ends', () => {
    let w = take(undefined, 60_000, 2, 60_000);
    expect(w.verdict).toMatchObject({ allowed: true, remaining: 1 });
    w = take(w.window, 60_500, 2, 60_000);
    expect(w.verdict).toMatchObject({ allowed: true, remaining: 0 });
    w = take(w.window, 70_000, 2, 60_000);
    expect(w.verdict).toEqual({ allowed: false, limit: 2, remaining: 0, retryAfterMs: 50_000 });
    w = take(w.window, 120_000, 2, 60_000);
    expect(w.verdict).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('puts hook traffic in the ingest bucket and everything else in the read bucket', () => {
    expect(bucketFor('POST', '/api/sessions/observations')).toBe('ingest');
    expect(bucketFor('POST', '/api/events/batch')).toBe('ingest');
    expect(bucketFor('GET', '/api/sessions/abc/status')).toBe('read');
    expect(bucketFor('GET', '/api/search')).toBe('read');
    expect(bucketFor('POST', '/mcp')).toBe('read');
  });

  it('takes limits from env vars, lets a team lower them but never raise them', () => {
    expect(limitFor({}, {}, 'ingest')).toBe(DEFAULT_LIMITS.ingest);
    expect(limitFor({}, {}, 'read')).toBe(DEFAULT_LIMITS.read);
    expect(limitFor({ RATE_LIMIT_READ_PER_MIN: '30' }, {}, 'read')).toBe(30);
    expect(() => limitFor({ RATE_LIMIT_READ_PER_MIN: 'lots' }, {}, 'read')).toThrow(/RATE_LIMIT_READ_PER_MIN/);
    expect(
      limitFor({ RATE_LIMIT_INGEST_PER_MIN: '100' }, { settings: { rate_limit_ingest_per_min: 10 } }, 'ingest'),
    ).toBe(10);
    expect(
      limitFor({ RATE_LIMIT_INGEST_PER_MIN: '100' }, { settings: { rate_limit_ingest_per_min: 1000 } }, 'ingest'),
    ).toBe(100);
  });

  it('answers a burst beyond the limit with 429, retry-after and rate_limited, per token and per bucket', async () => {
    const owner = await newOwner();
    await json(
      await call('/api/admin/settings', { token: owner.token, method: 'PATCH', json: { rate_limit_read_per_min: 5 } }),
    );
    const bob = await addTeammate(owner, fresh('bob'));
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < 8; i++) {
      const res = await call('/api/projects', { token: bob.token });
      statuses.push(res.status);
      if (res.status === 429) refused = res;
      else await res.arrayBuffer();
    }
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(3);
    expect(statuses.slice(0, 4).every((s) => s !== 429)).toBe(true);
    expect(refused).toBeDefined();
    const retryAfter = Number(refused!.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await errorCode(refused!)).toBe('rate_limited');
    // Another token of the same team has its own budget.
    const carol = await addTeammate(owner, fresh('carol'));
    expect((await call('/api/projects', { token: carol.token })).status).toBe(200);
    // The ingest bucket of the limited token is untouched by its read burst.
    const ingest = await call('/api/sessions/observations', { token: bob.token, json: {} });
    expect(ingest.status).not.toBe(429);
  });
});

describe('MCP body size', () => {
  it('refuses an /mcp body over 1 MB with 413 payload_too_large', async () => {
    const owner = await newOwner();
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'search', arguments: { query: 'x'.repeat(1_100_000) } },
    });
    const res = await call('/mcp', {
      token: owner.token,
      method: 'POST',
      body: big,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    });
    expect(res.status).toBe(413);
    expect(await errorCode(res)).toBe('payload_too_large');
  });
});
