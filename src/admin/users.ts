// Admin API, people and credentials: team info, users (add, role, remove), devices (enroll), tokens
// (list, revoke, rotate). Every lookup is scoped to the caller's team, so another team's ids are 404s.
import { inertLine } from '#shared/inert';
import { Hono } from 'hono';
import * as z from 'zod';
import { mintToken, prepareMint } from '../auth/tokens';
import type { Role, Scope } from '../auth/types';
import type { AppEnv } from '../auth/types';
import { AppError, notFound } from '../lib/errors';
import { jsonBody, parseWith, query } from '../lib/validate';
import { assertCanManage } from './guard';
import { writeAudit } from '../audit/audit';
import {
  addUser,
  findUser,
  listDevices,
  listTokens,
  listUsers,
  ownerCount,
  removeUser,
  revokeToken,
  rotateToken,
  setRole,
  teamToken as findTeamToken,
  type TokenRow,
  type UserRow,
} from '../db/members';
import { directoryDb, syncTeamCopy, teamDb, teamDbs } from '../db/shards';
import { personalMemoryCounts } from '../db/projects';
import { ensureDevice, teamInfo } from '../db/teams';
import { Name } from '../lib/names';
import { privateProjectsOf } from '../db/forget';
import { purgeProject } from '../forget/service';

const SMALL_BODY = 10_000;
const DAY = 86_400_000;

export const RoleName = z.enum(['owner', 'admin', 'member', 'reader']);
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
    label: z.string().transform(inertLine).pipe(z.string().trim().max(100)).optional(),
    expires_in_days: z.number().int().min(1).max(3650).optional(),
  })
  .strict();
export type EnrollBody = z.infer<typeof EnrollBody>;

export const TokenListQuery = z.object({
  user: Name.optional(),
  include_revoked: z.enum(['0', '1', 'true', 'false']).optional(),
});
export type TokenListQuery = z.infer<typeof TokenListQuery>;

async function activeUser(db: D1Database, teamId: number, handle: string): Promise<UserRow> {
  const u = await findUser(db, teamId, handle);
  if (!u || u.removed_at !== null) throw notFound('user');
  return u;
}

const parseTokenId = (raw: string) => {
  if (!/^[1-9][0-9]{0,15}$/.test(raw)) throw notFound('token');
  return Number(raw);
};

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
  const t = await findTeamToken(db, teamId, id);
  if (!t) throw notFound('token');
  return t;
}

/**
 * The owner-reads-private rule (issue 14, row 16), decided: an owner or admin MAY mint a token for a teammate
 * (onboarding a laptop, rotating a leaked token), and such a token acts as that teammate in everything,
 * including reading their private projects. It is not forbidden, because provisioning devices is what the
 * admin role is for; it is said out loud instead: the answer carries `acts_as` + `reads_private` + a notice,
 * and the audit row carries `minted_for_other: true` and `reads_private`, so the teammate (and every admin)
 * sees it in the audit view. A teammate who wants no one else to ever hold such a token enrolls their own
 * devices. Null when the caller mints for themselves.
 */
function actingAs(auth: { userId: number; handle: string }, userId: number, handle: string, scopes: readonly string[]) {
  if (userId === auth.userId) return null;
  const readsPrivate = scopes.includes('read');
  return {
    answer: {
      acts_as: handle,
      reads_private: readsPrivate,
      notice: `This token acts as ${handle}${readsPrivate ? `, including reading ${handle}'s private projects` : ''}. Hand it to ${handle} and keep no copy; the audit log shows that ${auth.handle} minted it.`,
    },
    audit: { minted_for_other: true, reads_private: readsPrivate },
  };
}

export const adminUserRoutes = new Hono<AppEnv>()
  .get('/team', async (c) => {
    const auth = c.get('auth');
    const team = (await teamInfo(directoryDb(c.env), auth.teamId)) ?? null;
    return c.json({
      team,
      you: { handle: auth.handle, role: auth.role, device: auth.deviceName, scopes: auth.scopes },
    });
  })

  .get('/users', async (c) => {
    const teamId = c.get('auth').teamId;
    const [list, personal] = await Promise.all([
      listUsers(directoryDb(c.env), teamId),
      personalMemoryCounts(await teamDb(c.env, teamId), teamId),
    ]);
    // A member's personal memory is theirs: admins see how many notes it holds, never a note.
    return c.json({ users: list.map((u) => ({ ...u, personal_memories: personal.get(u.handle) ?? 0 })) });
  })

  .post('/users', jsonBody(AddUserBody, SMALL_BODY), async (c) => {
    const auth = c.get('auth');
    const body = c.req.valid('json');
    assertCanManage(auth.role, body.role, body.role);
    const h = await teamDbs(c.env, auth.teamId);
    const db = h.dir;
    const now = Date.now();
    const existing = await findUser(db, auth.teamId, body.handle);
    if (existing && existing.removed_at === null)
      throw new AppError(409, 'user_exists', `"${body.handle}" is already a member of this team.`);
    await addUser(h, body.handle, body.role, existing?.id ?? null, now, {
      teamId: auth.teamId,
      actorUserId: auth.userId,
      action: 'user.add',
      target: `user:${body.handle}`,
      detail: { role: body.role, restored: !!existing },
      at: now,
    });
    return c.json({ user: { handle: body.handle, role: body.role } }, 201);
  })

  .patch('/users/:handle', jsonBody(RoleBody, SMALL_BODY), async (c) => {
    const auth = c.get('auth');
    const handle = parseWith(Name, c.req.param('handle'), 'not_found');
    const body = c.req.valid('json');
    const h = await teamDbs(c.env, auth.teamId);
    const db = h.dir;
    const user = await activeUser(db, auth.teamId, handle);
    assertCanManage(auth.role, user.role, body.role);
    if (user.role === 'owner' && body.role !== 'owner' && (await ownerCount(db, auth.teamId)) <= 1) {
      throw new AppError(409, 'last_owner', 'A team needs at least one owner; make someone else owner first.');
    }
    const now = Date.now();
    await setRole(h, user.id, body.role, {
      teamId: auth.teamId,
      actorUserId: auth.userId,
      action: 'user.role',
      target: `user:${handle}`,
      detail: { from: user.role, to: body.role },
      at: now,
    });
    return c.json({ user: { handle, role: body.role } });
  })

  .delete('/users/:handle', async (c) => {
    const auth = c.get('auth');
    const handle = parseWith(Name, c.req.param('handle'), 'not_found');
    const h = await teamDbs(c.env, auth.teamId);
    const db = h.dir;
    const user = await activeUser(db, auth.teamId, handle);
    assertCanManage(auth.role, user.role);
    if (user.role === 'owner' && (await ownerCount(db, auth.teamId)) <= 1) {
      throw new AppError(409, 'last_owner', 'The last owner cannot be removed.');
    }
    const now = Date.now();
    const n = await removeUser(h, user.id, now, {
      teamId: auth.teamId,
      actorUserId: auth.userId,
      action: 'user.remove',
      target: `user:${handle}`,
      at: now,
    });
    // Their private projects stay unless asked: the answer lists them, with `?delete_private_projects=1` they go
    // (everything in them, as `forget` deletes it).
    const privates = await privateProjectsOf(h.team, auth.teamId, user.id);
    const purge = ['1', 'true'].includes(c.req.query('delete_private_projects') ?? '');
    if (purge)
      for (const p of privates)
        await purgeProject(c.env, auth.teamId, { userId: auth.userId, handle: auth.handle }, p.id, p.key, now);
    return c.json({
      removed: handle,
      tokens_revoked: n,
      private_projects: privates.map((p) => p.key),
      private_projects_deleted: purge ? privates.map((p) => p.key) : [],
    });
  })

  .get('/devices', async (c) => {
    return c.json({ devices: await listDevices(directoryDb(c.env), c.get('auth').teamId) });
  })

  .post('/devices', jsonBody(EnrollBody, SMALL_BODY), async (c) => {
    const auth = c.get('auth');
    const body = c.req.valid('json');
    const h = await teamDbs(c.env, auth.teamId);
    const db = h.dir;
    const user = await activeUser(db, auth.teamId, body.user ?? auth.handle);
    assertCanManage(auth.role, user.role);
    const scopes: Scope[] = [...new Set(body.scopes ?? (['ingest', 'read'] as Scope[]))];
    if (scopes.includes('admin') && user.role !== 'owner' && user.role !== 'admin') {
      throw new AppError(400, 'scope_not_allowed', 'Only owners and admins can hold the "admin" scope.');
    }
    const now = Date.now();
    const deviceId = await ensureDevice(db, auth.teamId, user.id, body.name, now);
    const expiresAt = body.expires_in_days ? now + body.expires_in_days * DAY : null;
    const minted = await mintToken(
      db,
      { teamId: auth.teamId, userId: user.id, deviceId, scopes, label: body.label ?? body.name, expiresAt },
      now,
    );
    const actsAs = actingAs(auth, user.id, user.handle, scopes);
    await syncTeamCopy(h);
    await writeAudit(h.team, {
      teamId: auth.teamId,
      actorUserId: auth.userId,
      action: 'device.enroll',
      target: `token:${minted.id}`,
      detail: { user: user.handle, device: body.name, scopes, expires_at: expiresAt, ...actsAs?.audit },
      at: now,
    });
    return c.json(
      {
        token: minted.token,
        token_id: minted.id,
        prefix: minted.prefix,
        user: user.handle,
        device: body.name,
        scopes,
        expires_at: expiresAt,
        ...actsAs?.answer,
      },
      201,
    );
  })

  .get('/tokens', query(TokenListQuery), async (c) => {
    const auth = c.get('auth');
    const q = c.req.valid('query');
    const includeRevoked = q.include_revoked === '1' || q.include_revoked === 'true';
    const results = await listTokens(directoryDb(c.env), auth.teamId, q.user ?? null, includeRevoked);
    return c.json({ tokens: results.map(tokenView) });
  })

  .post('/tokens/:id/revoke', async (c) => {
    const auth = c.get('auth');
    const h = await teamDbs(c.env, auth.teamId);
    const db = h.dir;
    const t = await teamToken(db, auth.teamId, parseTokenId(c.req.param('id')));
    assertCanManage(auth.role, t.role);
    if (t.revoked_at !== null) return c.json({ token: tokenView(t) });
    const now = Date.now();
    await revokeToken(h, t.id, now, {
      teamId: auth.teamId,
      actorUserId: auth.userId,
      action: 'token.revoke',
      target: `token:${t.id}`,
      detail: { user: t.handle, prefix: t.prefix },
      at: now,
    });
    return c.json({ token: tokenView({ ...t, revoked_at: now }) });
  })

  .post('/tokens/:id/rotate', async (c) => {
    const auth = c.get('auth');
    const h = await teamDbs(c.env, auth.teamId);
    const db = h.dir;
    const now = Date.now();
    const t = await teamToken(db, auth.teamId, parseTokenId(c.req.param('id')));
    assertCanManage(auth.role, t.role);
    if (t.revoked_at !== null || t.removed_at !== null || (t.expires_at !== null && t.expires_at <= now)) {
      throw new AppError(
        409,
        'token_inactive',
        'Only an active token can be rotated; enroll the device again instead.',
      );
    }
    // The new token keeps the old one's lifetime length, counted from now.
    const expiresAt = t.expires_at === null ? null : now + (t.expires_at - t.created_at);
    const scopes = t.scopes.split(',').filter(Boolean) as Scope[];
    const mint = await prepareMint(
      db,
      { teamId: auth.teamId, userId: t.user_id, deviceId: t.device_id, scopes, label: t.label, expiresAt },
      now,
    );
    const actsAs = actingAs(auth, t.user_id, t.handle, scopes);
    const id = await rotateToken(h, mint.insert, t.id, now, {
      teamId: auth.teamId,
      actorUserId: auth.userId,
      action: 'token.rotate',
      target: `token:${t.id}`,
      detail: { user: t.handle, prefix: t.prefix, new_prefix: mint.prefix, ...actsAs?.audit },
      at: now,
    });
    return c.json(
      {
        token: mint.token,
        token_id: id,
        prefix: mint.prefix,
        revoked_token_id: t.id,
        scopes,
        expires_at: expiresAt,
        ...actsAs?.answer,
      },
      201,
    );
  });
