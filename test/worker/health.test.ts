import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/lib/crypto';
import { call, fresh, newIdentity } from './support/http';

describe('service basics', () => {
  it('answers the health check', async () => {
    const res = await call('/api/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok' });
  });

  it('answers an unknown public route with a stable 404 error code', async () => {
    const res = await call('/no-such-page');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'not_found', message: 'No such route.' } });
  });

  it('asks for a token on API routes called without one', async () => {
    const res = await call('/api/anything');
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('missing_token');
  });

  it('bootstraps a team whose token is stored only as a hash', async () => {
    const id = await newIdentity();
    expect(id.token).toMatch(/^cairn_[A-Za-z0-9]{40}$/);
    const rows = await env.DB.prepare('SELECT hash, prefix FROM tokens').all<{ hash: string; prefix: string }>();
    expect(rows.results.some((r) => r.hash === id.token)).toBe(false);
    expect(rows.results.some((r) => r.hash === undefined)).toBe(false);
    expect(rows.results.map((r) => r.hash)).toContain(await sha256Hex(id.token));
  });

  it('makes the first user of a team its owner and later ones members', async () => {
    const team = fresh('team');
    const first = await call('/api/admin/teams', { token: 'test-admin-secret', json: { team, user: 'alice' } });
    const second = await call('/api/admin/teams', { token: 'test-admin-secret', json: { team, user: 'bob' } });
    expect(((await first.json()) as { role: string }).role).toBe('owner');
    expect(((await second.json()) as { role: string }).role).toBe('member');
  });

  it('refuses bootstrap with a wrong admin secret', async () => {
    const res = await call('/api/admin/teams', { token: 'nope', json: { team: 'x', user: 'y' } });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_admin_secret');
  });

  it('answers malformed JSON with 400 malformed_json', async () => {
    const res = await call('/api/admin/teams', {
      token: 'test-admin-secret',
      body: '{nope',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('malformed_json');
  });
});
