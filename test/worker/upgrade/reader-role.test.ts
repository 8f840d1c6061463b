// Migration 0031 rebuilds `users` to let its CHECK name the reader role (issue 38). On a database that already
// holds teams, members, devices, tokens and memory rows naming them, every row is kept with its id, nothing names a
// user that is not there (PRAGMA foreign_key_check), a token still authenticates, and the new role is stored while
// an unknown one is still refused. Runs in a workerd of its own (it rebuilds the databases).
import { applyD1Migrations } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { resetDatabases } from '../support/fresh-db';
import { call, newIdentity } from '../support/http';
import { idsOf, seedObservation, seedProject, seedSession } from '../support/seed';

const AT = env.TEST_MIGRATIONS.findIndex((m) => m.name.startsWith('0031_'));

describe('migration 0031 (reader role)', { timeout: 60_000 }, () => {
  it('keeps every member, device, token and the rows that name them, and stores the reader role', async () => {
    expect(AT).toBeGreaterThan(0);
    await resetDatabases(AT);
    const owner = await newIdentity({ role: 'owner' });
    const mate = await newIdentity({ team: owner.team, role: 'member' });
    const ids = await idsOf(owner);
    const projectId = await seedProject(ids, 'github.com/acme/before-0031');
    const sessionId = await seedSession(ids, projectId, 'before-0031');
    const obs = await seedObservation(ids, projectId, sessionId, { title: 'Kept across the rebuild' });
    const before = await env.DB.prepare('SELECT id, team_id, handle, role, created_at FROM users ORDER BY id').all();

    await applyD1Migrations(env.DB, env.TEST_MIGRATIONS.slice(AT));

    expect(
      (await env.DB.prepare('SELECT id, team_id, handle, role, created_at FROM users ORDER BY id').all()).results,
    ).toEqual(before.results);
    expect((await env.DB.prepare('PRAGMA foreign_key_check').all()).results).toEqual([]);
    const row = await env.DB.prepare('SELECT author_user_id FROM observations WHERE id = ?').bind(obs).first();
    expect(row).toEqual({ author_user_id: ids.userId });
    // Tokens still work, and the new role is a role.
    const res = await call('/api/admin/users', { token: owner.token, json: { handle: 'rita', role: 'reader' } });
    expect(res.status, await res.clone().text()).toBe(201);
    expect((await call('/api/context?project=github.com/acme/before-0031', { token: mate.token })).status).toBe(200);
    await expect(env.DB.prepare("UPDATE users SET role = 'king' WHERE handle = 'rita'").run()).rejects.toThrow(
      /CHECK constraint failed/,
    );
  });
});
