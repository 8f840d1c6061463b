// Helpers for the teams tests: an owner with a fresh team, teammates enrolled through the admin API.
import { expect } from 'vitest';
import { call, newIdentity, type TestIdentity } from '../support/http';

export interface ErrorBody {
  error: { code: string; message: string };
}

export async function errorCode(res: Response): Promise<string> {
  return ((await res.json()) as ErrorBody).error.code;
}

export async function json<T>(res: Response, status = 200): Promise<T> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as T;
}

export interface Enrolled {
  token: string;
  token_id: number;
  prefix: string;
  user: string;
  device: string;
  scopes: string[];
  expires_at: number | null;
}

/** Adds a user (if not there yet) and enrolls a device for them; returns the device token. */
export async function addTeammate(
  owner: TestIdentity,
  handle: string,
  opts: {
    role?: 'owner' | 'admin' | 'member' | 'reader';
    device?: string;
    scopes?: string[];
    expires_in_days?: number;
  } = {},
): Promise<Enrolled> {
  const added = await call('/api/admin/users', { token: owner.token, json: { handle, role: opts.role ?? 'member' } });
  if (added.status !== 201 && added.status !== 409) throw new Error(`add user: ${added.status} ${await added.text()}`);
  const res = await call('/api/admin/devices', {
    token: owner.token,
    json: {
      user: handle,
      name: opts.device ?? `${handle}-laptop`,
      scopes: opts.scopes,
      expires_in_days: opts.expires_in_days,
    },
  });
  return json<Enrolled>(res, 201);
}

export const newOwner = () => newIdentity({ role: 'owner' });
