// Test helpers for calling the Worker in-process and making fresh teams and tokens.
import { exports } from 'cloudflare:workers';

const worker = (exports as unknown as { default: { fetch(input: string, init?: RequestInit): Promise<Response> } })
  .default;

export const BASE = 'http://cairn.test';
export const ADMIN_SECRET = 'test-admin-secret';

let counter = 0;
/** A name nobody else in this file has used (storage is shared by all tests of a file). */
export const fresh = (prefix: string) =>
  `${prefix}-${Date.now().toString(36)}-${++counter}-${Math.random().toString(36).slice(2, 6)}`;

export function call(path: string, init: RequestInit & { token?: string; json?: unknown } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (init.token) headers.set('authorization', `Bearer ${init.token}`);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(init.json);
  }
  return worker.fetch(`${BASE}${path}`, { ...init, headers, body, method: init.method ?? (body ? 'POST' : 'GET') });
}

export interface TestIdentity {
  token: string;
  team: string;
  user: string;
  device: string;
}

/** Bootstraps a team/user/device (fresh names unless given) and returns its token. */
export async function newIdentity(
  opts: Partial<Omit<TestIdentity, 'token'>> & { role?: 'owner' | 'admin' | 'member' } = {},
): Promise<TestIdentity> {
  const team = opts.team ?? fresh('team');
  const user = opts.user ?? fresh('user');
  const device = opts.device ?? fresh('dev');
  const res = await call('/api/admin/teams', { token: ADMIN_SECRET, json: { team, user, device, role: opts.role } });
  if (res.status !== 201) throw new Error(`bootstrap failed: ${res.status} ${await res.text()}`);
  const { token } = (await res.json()) as { token: string };
  return { token, team, user, device };
}

/**
 * A test that changes tokens, members or team settings straight in D1 acts like another isolate: this
 * isolate's token memo (src/auth/token-cache.ts) would show the change only after TOKEN_CACHE_MS, so the
 * test drops the memo instead of waiting.
 */
export { forgetAllTokens as forgetTokenMemo } from '../../../src/auth/token-cache';
