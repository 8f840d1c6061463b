// Admin API, people and credentials: team info, users (add, role, remove), devices (enroll), tokens
// (list, revoke, rotate). Every lookup is scoped to the caller's team, so another team's ids are 404s.
import { Hono } from 'hono';
import { z } from 'zod';
import { mintToken, prepareMint } from '../auth/tokens';
import type { Role, Scope } from '../auth/types';
import type { AppEnv } from '../auth/types';
import { AppError, notFound } from '../lib/errors';
import { parseWith, readJson } from '../lib/validate';
import { assertCanManage } from './guard';
import { auditStatement } from '../audit/audit';
import { Name } from './bootstrap';
import { privateProjectsOf } from '../db/forget';
import { purgeProject } from '../forget/service';

const SMALL_BODY = 10_000;
const DAY = 86_400_000;

export const RoleName = z.enum(['owner', 'admin', 'member']);
export const ScopeName = z.enum(['ingest', 'read', 'admin']);

export const AddUserBody = z.object({ handle: Name, role: RoleName.default('member') }).strict();
export type AddUserBody = z.infer<typeof AddUserBody>;

export const RoleBody = z.object({ role: RoleName }).strict();
export type RoleBody = z.infer<typeof RoleBody>;

export const EnrollBody = z
  .object({
    user: Name.optional(),
    name: Name,
    scopes: z.array(ScopeName).min(1).max(3).optional(),
    label: z.string().trim().max(100).optional(),
    expires_in_days: z.number().int().min(1).max(3650).optional(),
  })
  .strict();
export type EnrollBody = z.infer<typeof EnrollBody>;

export const TokenListQuery = z.object({ user: Name.optional(), include_revoked: z.enum(['0', '1', 'true', 'false']).optional() });
export type TokenListQuery = z.infer<typeof TokenListQuery>;

interface UserRow {
  id: number;
  handle: string;
  role: Role;
  removed_at: number | null;
}

async function findUser(db: D1Database, teamId: number, handle: string): Promise<UserRow | null> {
  return db.prepare('SELECT id, handle, role, removed_at FROM users WHERE team_id = ? AND handle = ?').bind(teamId, handle).first<UserRow>();
}

async function activeUser(db: D1Database, teamId: number, handle: string): Promise<UserRow> {
  const u = await findUser(db, teamId, handle);
  if (!u || u.removed_at !== null) throw notFound('user');
  return u;
}

async function ownerCount(db: D1Database, teamId: number): Promise<number> {
  const r = await db.prepare("SELECT COUNT(*) AS n FROM users WHERE team_id = ? AND role = 'owner' AND removed_at IS NULL").bind(teamId).first<{ n: number }>();
  return r?.n ?? 0;
}

const parseTokenId = (raw: string) => {
  if (!/^[1-9][0-9]{0,15}$/.test(raw)) throw notFound('token');
  return Number(raw);
};

interface TokenRow {
  id: number;
  prefix: string;
  label: string | null;
  scopes: string;
  created_at: number;
  last_used_at: number | null;
  expires_at: number | null;
  revoked_at: number | null;
  user_id: number;
  device_id: number | null;
  handle: string;
  role: Role;
  removed_at: number | null;
  device: string | null;
}

const TOKEN_SELECT = `SELECT t.id, t.prefix, t.label, t.scopes, t.created_at, t.last_used_at, t.expires_at, t.revoked_at,
        t.user_id, t.device_id, u.handle, u.role, u.removed_at, d.name AS device
   FROM tokens t JOIN users u ON u.id = t.user_id LEFT JOIN devices d ON d.id = t.device_id`;

/** What an admin sees of a token: never the hash, never the plaintext. */
const tokenView = (t: TokenRow) => ({
  id: t.id,
  prefix: t.prefix,
  label: t.label,
  user: t.handle,
  device: t.device,
  scopes: t.scopes.split(',').filter(Boolean),
  created_at: t.created_at,
  last_used_at: t.last_used_at,
  expires_at: t.expires_at,
  revoked_at: t.revoked_at,
});

async function teamToken(db: D1Database, teamId: number, id: number): Promise<TokenRow> {
  const t = await db.prepare(`${TOKEN_SELECT} WHERE t.team_id = ? AND t.id = ?`).bind(teamId, id).first<TokenRow>();
  if (!t) throw notFound('token');
  return t;
}

export const adminUserRoutes = new Hono<AppEnv>()
  .get('/team', async (c) => {
    const auth = c.get('auth');
    const team = await c.env.DB.prepare('SELECT slug, name, created_at FROM teams WHERE id = ?').bind(auth.teamId).first();
    return c.json({ team, you: { handle: auth.handle, role: auth.role, device: auth.deviceName, scopes: auth.scopes } });
  })

  .get('/users', async (c) => {
    const { results } = await c.env.DB.prepare(
      `SELECT u.handle, u.role, u.created_at, u.removed_at,
              (SELECT COUNT(*) FROM devices d WHERE d.user_id = u.id) AS devices,
              (SELECT COUNT(*) FROM tokens t WHERE t.user_id = u.id AND t.revoked_at IS NULL) AS active_tokens
         FROM users u WHERE u.team_id = ? ORDER BY u.removed_at IS NOT NULL, u.handle`,
    )
      .bind(c.get('auth').teamId)
      .all();
    return c.json({ users: results });
  })

  .post('/users', async (c) => {
    const auth = c.get('auth');
    const body = await readJson(c, AddUserBody, SMALL_BODY);
    assertCanManage(auth.role, body.role, body.role);
    const db = c.env.DB;
    const now = Date.now();
    const existing = await findUser(db, auth.teamId, body.handle);
    if (existing && existing.removed_at === null) throw new AppError(409, 'user_exists', `"${body.handle}" is already a member of this team.`);
    const write = existing
      ? db.prepare('UPDATE users SET role = ?, removed_at = NULL WHERE id = ?').bind(body.role, existing.id)
      : db.prepare('INSERT INTO users (team_id, handle, role, created_at) VALUES (?, ?, ?, ?)').bind(auth.teamId, body.handle, body.role, now);
    await db.batch([
      write,
      auditStatement(db, { teamId: auth.teamId, actorUserId: auth.userId, action: 'user.add', target: `user:${body.handle}`, detail: { role: body.role, restored: !!existing }, at: now }),
    ]);
    return c.json({ user: { handle: body.handle, role: body.role } }, 201);
  })

  .patch('/users/:handle', async (c) => {
    const auth = c.get('auth');
    const handle = parseWith(Name, c.req.param('handle'), 'not_found');
    const body = await readJson(c, RoleBody, SMALL_BODY);
    const db = c.env.DB;
    const user = await activeUser(db, auth.teamId, handle);
    assertCanManage(auth.role, user.role, body.role);
    if (user.role === 'owner' && body.role !== 'owner' && (await ownerCount(db, auth.teamId)) <= 1) {
      throw new AppError(409, 'last_owner', 'A team needs at least one owner; make someone else owner first.');
    }
    const now = Date.now();
    const statements = [
      db.prepare('UPDATE users SET role = ? WHERE id = ?').bind(body.role, user.id),
      auditStatement(db, { teamId: auth.teamId, actorUserId: auth.userId, action: 'user.role', target: `user:${handle}`, detail: { from: user.role, to: body.role }, at: now }),
    ];
    // A member cannot hold admin credentials: demotion strips the admin scope from their tokens.
    if (body.role === 'member') {
      statements.push(
        db.prepare(
          `UPDATE tokens SET scopes = trim(replace(replace(replace(',' || scopes || ',', ',admin,', ','), ',,', ','), ',,', ','), ',')
            WHERE user_id = ? AND ',' || scopes || ',' LIKE '%,admin,%'`,
        ).bind(user.id),
      );
    }
    await db.batch(statements);
    return c.json({ user: { handle, role: body.role } });
  })

  .delete('/users/:handle', async (c) => {
    const auth = c.get('auth');
    const handle = parseWith(Name, c.req.param('handle'), 'not_found');
    const db = c.env.DB;
    const user = await activeUser(db, auth.teamId, handle);
    assertCanManage(auth.role, user.role);
    if (user.role === 'owner' && (await ownerCount(db, auth.teamId)) <= 1) {
      throw new AppError(409, 'last_owner', 'The last owner cannot be removed.');
    }
    const now = Date.now();
    const [, revoked] = await db.batch([
      db.prepare('UPDATE users SET removed_at = ? WHERE id = ?').bind(now, user.id),
      db.prepare('UPDATE tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL').bind(now, user.id),
      auditStatement(db, { teamId: auth.teamId, actorUserId: auth.userId, action: 'user.remove', target: `user:${handle}`, at: now }),
    ]);
    const n = revoked?.meta.changes ?? 0;
    // Their private projects stay unless asked: the answer lists them, with `?delete_private_projects=1` they go
    // (everything in them, as `forget` deletes it).
    const privates = await privateProjectsOf(db, auth.teamId, user.id);
    const purge = ['1', 'true'].includes(c.req.query('delete_private_projects') ?? '');
    if (purge) for (const p of privates) await purgeProject(c.env, auth.teamId, auth.userId, p.id, p.key, now);
    return c.json({
      removed: handle,
      tokens_revoked: n,
      private_projects: privates.map((p) => p.key),
      private_projects_deleted: purge ? privates.map((p) => p.key) : [],
    });
  })

  .get('/devices', async (c) => {
    const { results } = await c.env.DB.prepare(
      `SELECT d.id, u.handle AS user, d.name, d.created_at, d.last_seen_at,
              (SELECT COUNT(*) FROM tokens t WHERE t.device_id = d.id AND t.revoked_at IS NULL) AS active_tokens
         FROM devices d JOIN users u ON u.id = d.user_id
        WHERE d.team_id = ? AND u.removed_at IS NULL ORDER BY u.handle, d.name`,
    )
      .bind(c.get('auth').teamId)
      .all();
    return c.json({ devices: results });
  })

  .post('/devices', async (c) => {
    const auth = c.get('auth');
    const body = await readJson(c, EnrollBody, SMALL_BODY);
    const db = c.env.DB;
    const user = await activeUser(db, auth.teamId, body.user ?? auth.handle);
    assertCanManage(auth.role, user.role);
    const scopes: Scope[] = [...new Set(body.scopes ?? (['ingest', 'read'] as Scope[]))];
    if (scopes.includes('admin') && user.role === 'member') {
      throw new AppError(400, 'scope_not_allowed', 'Only owners and admins can hold the "admin" scope.');
    }
    const now = Date.now();
    await db
      .prepare('INSERT INTO devices (team_id, user_id, name, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(team_id, user_id, name) DO NOTHING')
      .bind(auth.teamId, user.id, body.name, now)
      .run();
    const device = await db.prepare('SELECT id FROM devices WHERE team_id = ? AND user_id = ? AND name = ?').bind(auth.teamId, user.id, body.name).first<{ id: number }>();
    const expiresAt = body.expires_in_days ? now + body.expires_in_days * DAY : null;
    const minted = await mintToken(db, { teamId: auth.teamId, userId: user.id, deviceId: device!.id, scopes, label: body.label ?? body.name, expiresAt }, now);
    await auditStatement(db, {
      teamId: auth.teamId, actorUserId: auth.userId, action: 'device.enroll', target: `token:${minted.id}`,
      detail: { user: user.handle, device: body.name, scopes, expires_at: expiresAt }, at: now,
    }).run();
    return c.json(
      { token: minted.token, token_id: minted.id, prefix: minted.prefix, user: user.handle, device: body.name, scopes, expires_at: expiresAt },
      201,
    );
  })

  .get('/tokens', async (c) => {
    const auth = c.get('auth');
    const q = parseWith(TokenListQuery, c.req.query());
    const includeRevoked = q.include_revoked === '1' || q.include_revoked === 'true';
    const { results } = await c.env.DB.prepare(
      `${TOKEN_SELECT} WHERE t.team_id = ?1 AND (?2 IS NULL OR u.handle = ?2) AND (?3 = 1 OR t.revoked_at IS NULL)
        ORDER BY t.created_at DESC, t.id DESC LIMIT 500`,
    )
      .bind(auth.teamId, q.user ?? null, includeRevoked ? 1 : 0)
      .all<TokenRow>();
    return c.json({ tokens: results.map(tokenView) });
  })

  .post('/tokens/:id/revoke', async (c) => {
    const auth = c.get('auth');
    const db = c.env.DB;
    const t = await teamToken(db, auth.teamId, parseTokenId(c.req.param('id')));
    assertCanManage(auth.role, t.role);
    if (t.revoked_at !== null) return c.json({ token: tokenView(t) });
    const now = Date.now();
    await db.batch([
      db.prepare('UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').bind(now, t.id),
      auditStatement(db, { teamId: auth.teamId, actorUserId: auth.userId, action: 'token.revoke', target: `token:${t.id}`, detail: { user: t.handle, prefix: t.prefix }, at: now }),
    ]);
    return c.json({ token: tokenView({ ...t, revoked_at: now }) });
  })

  .post('/tokens/:id/rotate', async (c) => {
    const auth = c.get('auth');
    const db = c.env.DB;
    const now = Date.now();
    const t = await teamToken(db, auth.teamId, parseTokenId(c.req.param('id')));
    assertCanManage(auth.role, t.role);
    if (t.revoked_at !== null || t.removed_at !== null || (t.expires_at !== null && t.expires_at <= now)) {
      throw new AppError(409, 'token_inactive', 'Only an active token can be rotated; enroll the device again instead.');
    }
    // The new token keeps the old one's lifetime length, counted from now.
    const expiresAt = t.expires_at === null ? null : now + (t.expires_at - t.created_at);
    const scopes = t.scopes.split(',').filter(Boolean) as Scope[];
    const mint = await prepareMint(db, { teamId: auth.teamId, userId: t.user_id, deviceId: t.device_id, scopes, label: t.label, expiresAt }, now);
    const [inserted] = await db.batch<{ id: number }>([
      mint.statement,
      db.prepare('UPDATE tokens SET revoked_at = ? WHERE id = ?').bind(now, t.id),
      auditStatement(db, { teamId: auth.teamId, actorUserId: auth.userId, action: 'token.rotate', target: `token:${t.id}`, detail: { user: t.handle, prefix: t.prefix, new_prefix: mint.prefix }, at: now }),
    ]);
    const id = inserted!.results[0]!.id;
    return c.json({ token: mint.token, token_id: id, prefix: mint.prefix, revoked_token_id: t.id, scopes, expires_at: expiresAt }, 201);
  });
