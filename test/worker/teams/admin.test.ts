// Admin API flows: users, devices, tokens (list, revoke, rotate), settings and the audit log.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/lib/crypto';
import { call, fresh, forgetTokenMemo } from '../support/http';
import { addTeammate, errorCode, json, newOwner } from './support';

interface TokenView {
  id: number;
  prefix: string;
  label: string | null;
  user: string;
  device: string | null;
  scopes: string[];
  created_at: number;
  last_used_at: number | null;
  expires_at: number | null;
  revoked_at: number | null;
}

const audit = async (token: string, action?: string) =>
  (
    await json<{
      entries: { action: string; actor: string | null; target: string | null; detail: Record<string, unknown> }[];
    }>(await call(`/api/admin/audit${action ? `?action=${action}` : ''}`, { token }))
  ).entries;

describe('users', () => {
  it('adds a member, lists them, changes their role and removes them', async () => {
    const owner = await newOwner();
    const handle = fresh('bob');
    expect((await call('/api/admin/users', { token: owner.token, json: { handle } })).status).toBe(201);
    let users = (
      await json<{ users: { handle: string; role: string; removed_at: number | null }[] }>(
        await call('/api/admin/users', { token: owner.token }),
      )
    ).users;
    expect(users.find((u) => u.handle === handle)).toMatchObject({ role: 'member', removed_at: null });

    const patched = await call(`/api/admin/users/${handle}`, {
      token: owner.token,
      method: 'PATCH',
      json: { role: 'admin' },
    });
    expect(await json(patched)).toEqual({ user: { handle, role: 'admin' } });

    const removed = await call(`/api/admin/users/${handle}`, { token: owner.token, method: 'DELETE' });
    expect(await json(removed)).toEqual({
      removed: handle,
      tokens_revoked: 0,
      private_projects: [],
      private_projects_deleted: [],
    });
    users = (
      await json<{ users: { handle: string; role: string; removed_at: number | null }[] }>(
        await call('/api/admin/users', { token: owner.token }),
      )
    ).users;
    expect(users.find((u) => u.handle === handle)?.removed_at).toEqual(expect.any(Number));

    const actions = (await audit(owner.token, 'user')).map((e) => e.action);
    expect(actions).toEqual(['user.remove', 'user.role', 'user.add']);
  });

  it('refuses to add a handle that is already a member', async () => {
    const owner = await newOwner();
    const handle = fresh('dup');
    await call('/api/admin/users', { token: owner.token, json: { handle } });
    const again = await call('/api/admin/users', { token: owner.token, json: { handle } });
    expect(again.status).toBe(409);
    expect(await errorCode(again)).toBe('user_exists');
  });

  it('revokes every token of a removed user, so their next request fails', async () => {
    const owner = await newOwner();
    const bob = await addTeammate(owner, fresh('bob'));
    expect((await call('/api/admin/tokens', { token: bob.token })).status).toBe(403); // alive, just not admin
    const removed = await json<{ tokens_revoked: number }>(
      await call(`/api/admin/users/${bob.user}`, { token: owner.token, method: 'DELETE' }),
    );
    expect(removed.tokens_revoked).toBe(1);
    const next = await call('/api/projects', { token: bob.token });
    expect(next.status).toBe(401);
    expect(await errorCode(next)).toBe('token_revoked');
  });

  it('keeps at least one owner', async () => {
    const owner = await newOwner();
    const demote = await call(`/api/admin/users/${owner.user}`, {
      token: owner.token,
      method: 'PATCH',
      json: { role: 'member' },
    });
    expect(demote.status).toBe(409);
    expect(await errorCode(demote)).toBe('last_owner');
    const remove = await call(`/api/admin/users/${owner.user}`, { token: owner.token, method: 'DELETE' });
    expect(await errorCode(remove)).toBe('last_owner');
  });

  it('does not let an admin touch an owner or mint owners', async () => {
    const owner = await newOwner();
    const admin = await addTeammate(owner, fresh('adm'), { role: 'admin', scopes: ['ingest', 'read', 'admin'] });
    const demote = await call(`/api/admin/users/${owner.user}`, {
      token: admin.token,
      method: 'PATCH',
      json: { role: 'member' },
    });
    expect(demote.status).toBe(403);
    expect(await errorCode(demote)).toBe('owner_only');
    const mint = await call('/api/admin/users', { token: admin.token, json: { handle: fresh('o'), role: 'owner' } });
    expect(await errorCode(mint)).toBe('owner_only');
    expect((await call('/api/admin/users', { token: admin.token, json: { handle: fresh('m') } })).status).toBe(201);
  });

  it('takes administration away as soon as an admin is demoted', async () => {
    const owner = await newOwner();
    const admin = await addTeammate(owner, fresh('adm'), { role: 'admin', scopes: ['ingest', 'read', 'admin'] });
    expect((await call('/api/admin/users', { token: admin.token })).status).toBe(200);
    await call(`/api/admin/users/${admin.user}`, { token: owner.token, method: 'PATCH', json: { role: 'member' } });
    const after = await call('/api/admin/users', { token: admin.token });
    expect(after.status).toBe(403);
    const row = await env.DB.prepare('SELECT scopes FROM tokens WHERE id = ?')
      .bind(admin.token_id)
      .first<{ scopes: string }>();
    expect(row?.scopes).toBe('ingest,read');
  });

  it('answers bad handles and unknown users with stable codes', async () => {
    const owner = await newOwner();
    expect(await errorCode(await call('/api/admin/users', { token: owner.token, json: { handle: 'has space' } }))).toBe(
      'invalid_body',
    );
    expect(
      await errorCode(await call('/api/admin/users', { token: owner.token, json: { handle: 'x', role: 'god' } })),
    ).toBe('invalid_body');
    const missing = await call(`/api/admin/users/${fresh('nobody')}`, { token: owner.token, method: 'DELETE' });
    expect(missing.status).toBe(404);
    expect(await errorCode(missing)).toBe('not_found');
  });
});

describe('devices and tokens', () => {
  it('enrolls a device with ingest and read scopes by default and shows the token once', async () => {
    const owner = await newOwner();
    const bob = await addTeammate(owner, fresh('bob'));
    expect(bob.token).toMatch(/^cairn_[A-Za-z0-9]{40}$/);
    expect(bob.scopes).toEqual(['ingest', 'read']);
    const list = (
      await json<{ tokens: TokenView[] }>(await call(`/api/admin/tokens?user=${bob.user}`, { token: owner.token }))
    ).tokens;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      id: bob.token_id,
      prefix: bob.token.slice(0, 12),
      user: bob.user,
      device: bob.device,
      scopes: ['ingest', 'read'],
      revoked_at: null,
    });
    expect(JSON.stringify(list)).not.toContain(bob.token);
    expect(JSON.stringify(list)).not.toContain(await sha256Hex(bob.token));
    expect(Object.keys(list[0]!)).not.toContain('hash');
  });

  it('keeps no plaintext token anywhere in the token table', async () => {
    const owner = await newOwner();
    const bob = await addTeammate(owner, fresh('bob'));
    const { results } = await env.DB.prepare('SELECT * FROM tokens').all<Record<string, unknown>>();
    const dump = JSON.stringify(results);
    for (const t of [owner.token, bob.token]) {
      expect(dump).not.toContain(t);
      expect(dump).not.toContain(t.slice(12));
      expect(dump).toContain(await sha256Hex(t));
    }
  });

  it('refuses the admin scope for a member device', async () => {
    const owner = await newOwner();
    const handle = fresh('bob');
    await call('/api/admin/users', { token: owner.token, json: { handle } });
    const res = await call('/api/admin/devices', {
      token: owner.token,
      json: { user: handle, name: 'box', scopes: ['admin'] },
    });
    expect(res.status).toBe(400);
    expect(await errorCode(res)).toBe('scope_not_allowed');
  });

  it('records when a token and its device were last used', async () => {
    const owner = await newOwner();
    const bob = await addTeammate(owner, fresh('bob'));
    await call('/api/projects', { token: bob.token });
    const row = await env.DB.prepare('SELECT last_used_at FROM tokens WHERE id = ?')
      .bind(bob.token_id)
      .first<{ last_used_at: number | null }>();
    expect(row?.last_used_at).toEqual(expect.any(Number));
    const devices = (
      await json<{ devices: { name: string; last_seen_at: number | null }[] }>(
        await call('/api/admin/devices', { token: owner.token }),
      )
    ).devices;
    expect(devices.find((d) => d.name === bob.device)?.last_seen_at).toEqual(expect.any(Number));
  });

  it('revokes a token so that its next request fails, and says so in the audit log', async () => {
    const owner = await newOwner();
    const bob = await addTeammate(owner, fresh('bob'));
    const revoked = await json<{ token: TokenView }>(
      await call(`/api/admin/tokens/${bob.token_id}/revoke`, { token: owner.token, method: 'POST' }),
    );
    expect(revoked.token.revoked_at).toEqual(expect.any(Number));
    const next = await call('/api/projects', { token: bob.token });
    expect(next.status).toBe(401);
    expect(await errorCode(next)).toBe('token_revoked');
    await call('/api/projects', { token: bob.token });
    const entries = await audit(owner.token, 'token');
    expect(entries.filter((e) => e.action === 'token.revoke')).toHaveLength(1);
    // The anomaly is logged once per hour, not once per retry.
    expect(entries.filter((e) => e.action === 'token.revoked_used')).toHaveLength(1);
    expect(entries.find((e) => e.action === 'token.revoked_used')?.target).toBe(`token:${bob.token_id}`);
  });

  it('rejects an expired token on its next request and logs the attempt', async () => {
    const owner = await newOwner();
    const bob = await addTeammate(owner, fresh('bob'), { expires_in_days: 30 });
    expect(bob.expires_at).toEqual(expect.any(Number));
    expect((await call('/api/admin/tokens', { token: bob.token })).status).toBe(403);
    await env.DB.prepare('UPDATE tokens SET expires_at = ? WHERE id = ?')
      .bind(Date.now() - 1, bob.token_id)
      .run();
    forgetTokenMemo();
    const next = await call('/api/projects', { token: bob.token });
    expect(next.status).toBe(401);
    expect(await errorCode(next)).toBe('token_expired');
    expect((await audit(owner.token, 'token.expired_used')).length).toBe(1);
  });

  it('rotates a token: the new one works, the old one is revoked, scopes and device carry over', async () => {
    const owner = await newOwner();
    const bob = await addTeammate(owner, fresh('bob'), { expires_in_days: 10 });
    const rotated = await json<{
      token: string;
      token_id: number;
      revoked_token_id: number;
      scopes: string[];
      expires_at: number;
    }>(await call(`/api/admin/tokens/${bob.token_id}/rotate`, { token: owner.token, method: 'POST' }), 201);
    expect(rotated.token).not.toBe(bob.token);
    expect(rotated.revoked_token_id).toBe(bob.token_id);
    expect(rotated.scopes).toEqual(['ingest', 'read']);
    expect(rotated.expires_at).toBeGreaterThanOrEqual(bob.expires_at!);
    expect((await call('/api/projects', { token: bob.token })).status).toBe(401);
    const fresh_ = await call('/api/projects', { token: rotated.token });
    expect(fresh_.status).not.toBe(401);
    const list = (
      await json<{ tokens: TokenView[] }>(
        await call(`/api/admin/tokens?user=${bob.user}&include_revoked=1`, { token: owner.token }),
      )
    ).tokens;
    expect(list.find((t) => t.id === rotated.token_id)).toMatchObject({ device: bob.device, revoked_at: null });
    expect(list.find((t) => t.id === bob.token_id)?.revoked_at).toEqual(expect.any(Number));
    const again = await call(`/api/admin/tokens/${bob.token_id}/rotate`, { token: owner.token, method: 'POST' });
    expect(again.status).toBe(409);
    expect(await errorCode(again)).toBe('token_inactive');
  });

  it('lists only active tokens unless asked for revoked ones too', async () => {
    const owner = await newOwner();
    const bob = await addTeammate(owner, fresh('bob'));
    await call(`/api/admin/tokens/${bob.token_id}/revoke`, { token: owner.token, method: 'POST' });
    const active = (
      await json<{ tokens: TokenView[] }>(await call(`/api/admin/tokens?user=${bob.user}`, { token: owner.token }))
    ).tokens;
    expect(active).toEqual([]);
    const all = (
      await json<{ tokens: TokenView[] }>(
        await call(`/api/admin/tokens?user=${bob.user}&include_revoked=true`, { token: owner.token }),
      )
    ).tokens;
    expect(all.map((t) => t.id)).toEqual([bob.token_id]);
  });

  it('notes in the audit log when a token shows up under a device name it was not enrolled for', async () => {
    const owner = await newOwner();
    const bob = await addTeammate(owner, fresh('bob'), { device: 'laptop' });
    await call('/api/projects', { token: bob.token, headers: { 'x-cairn-device': 'laptop' } });
    expect(await audit(owner.token, 'token.new_device')).toEqual([]);
    await call('/api/projects', { token: bob.token, headers: { 'x-cairn-device': 'unknown-box' } });
    await call('/api/projects', { token: bob.token, headers: { 'x-cairn-device': 'unknown-box' } });
    const entries = await audit(owner.token, 'token.new_device');
    expect(entries).toHaveLength(1);
    expect(entries[0]!.detail).toMatchObject({ device: 'unknown-box', enrolled_device: 'laptop' });
  });
});

describe('who may administer', () => {
  it('refuses a member token even if it somehow has the admin scope', async () => {
    const owner = await newOwner();
    const bob = await addTeammate(owner, fresh('bob'));
    await env.DB.prepare("UPDATE tokens SET scopes = 'ingest,read,admin' WHERE id = ?").bind(bob.token_id).run();
    forgetTokenMemo();
    const res = await call('/api/admin/tokens', { token: bob.token });
    expect(res.status).toBe(403);
    expect(await errorCode(res)).toBe('not_admin');
  });

  it('refuses an owner token that lacks the admin scope', async () => {
    const owner = await newOwner();
    const dev = await json<{ token: string }>(
      await call('/api/admin/devices', { token: owner.token, json: { name: 'ci-box' } }),
      201,
    );
    for (const [method, path] of [
      ['GET', '/api/admin/users'],
      ['GET', '/api/admin/audit'],
      ['PATCH', '/api/admin/settings'],
      ['POST', '/api/admin/devices'],
    ] as const) {
      const res = await call(path, { token: dev.token, method, json: method === 'GET' ? undefined : {} });
      expect(res.status, path).toBe(403);
      expect(await errorCode(res)).toBe('insufficient_scope');
    }
  });
});

describe('settings and audit', () => {
  it('patches team settings, removes keys set to null, and rejects unknown keys or bad values', async () => {
    const owner = await newOwner();
    const patch = {
      mode: 'code',
      context_observations: 30,
      skipped_tools: ['Bash'],
      excluded_projects: ['~/kunden/**'],
      share_sensitive: true,
      observation_types: ['bugfix', 'decision'],
    };
    const set = await json<{ settings: Record<string, unknown> }>(
      await call('/api/admin/settings', { token: owner.token, method: 'PATCH', json: patch }),
    );
    expect(set.settings).toMatchObject(patch);
    const cleared = await json<{ settings: Record<string, unknown> }>(
      await call('/api/admin/settings', { token: owner.token, method: 'PATCH', json: { share_sensitive: null } }),
    );
    expect(cleared.settings).not.toHaveProperty('share_sensitive');
    expect(cleared.settings).toMatchObject({ context_observations: 30 });
    expect(await json(await call('/api/admin/settings', { token: owner.token }))).toEqual(cleared);

    const unknown = await call('/api/admin/settings', {
      token: owner.token,
      method: 'PATCH',
      json: { colour: 'blue' },
    });
    expect(unknown.status).toBe(400);
    expect(await errorCode(unknown)).toBe('invalid_body');
    const bad = await call('/api/admin/settings', {
      token: owner.token,
      method: 'PATCH',
      json: { context_observations: -1 },
    });
    expect(bad.status).toBe(400);
    const stored = await env.DB.prepare('SELECT settings FROM teams WHERE slug = ?')
      .bind(owner.team)
      .first<{ settings: string }>();
    expect(JSON.parse(stored!.settings)).toEqual(cleared.settings);
  });

  it('pages the audit log newest first and never shows another team its rows', async () => {
    const a = await newOwner();
    const b = await newOwner();
    for (let i = 0; i < 3; i++) await call('/api/admin/users', { token: a.token, json: { handle: fresh('u') } });
    const page1 = await json<{ entries: { id: number; action: string }[]; next_before: number | null }>(
      await call('/api/admin/audit?limit=2', { token: a.token }),
    );
    expect(page1.entries).toHaveLength(2);
    expect(page1.entries[0]!.id).toBeGreaterThan(page1.entries[1]!.id);
    const page2 = await json<{ entries: { id: number }[] }>(
      await call(`/api/admin/audit?limit=2&before=${page1.next_before}`, { token: a.token }),
    );
    expect(page2.entries[0]!.id).toBeLessThan(page1.entries[1]!.id);
    const bEntries = await audit(b.token);
    expect(bEntries.map((e) => e.action)).toEqual(['team.bootstrap']);
  });
});
