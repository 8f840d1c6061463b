// POST /api/admin/teams: the operator (CAIRN_ADMIN_SECRET) creates a team, its first user and device,
// and gets a token for them. Idempotent on names: whatever already exists is reused.
import { configOf } from '../config';
import { Hono, type MiddlewareHandler } from 'hono';
import { z } from 'zod';
import { mintToken } from '../auth/tokens';
import type { Role } from '../auth/types';
import type { AppEnv } from '../auth/types';
import { sha256Hex, timingSafeEqual } from '../lib/crypto';
import { AppError } from '../lib/errors';
import { jsonBody } from '../lib/validate';
import { writeAudit } from '../audit/audit';
import { directoryDb, placeTeam, syncTeamCopy, teamDbs } from '../db/shards';
import { ensureDevice, ensureTeam, ensureUser, memberCount } from '../db/teams';

/** Team, user and device names: short, URL- and shell-safe. */
export const Name = z.string().trim().min(1).max(64).regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-" only');

export const BootstrapBody = z.object({
  team: Name,
  user: Name,
  device: Name.optional(),
  role: z.enum(['owner', 'admin', 'member']).optional(),
});
export type BootstrapBody = z.infer<typeof BootstrapBody>;

async function requireAdminSecret(header: string | undefined, secret: string | undefined) {
  if (!secret) throw new AppError(403, 'admin_disabled', 'CAIRN_ADMIN_SECRET is not configured on this server.');
  const given = /^Bearer\s+(\S+)$/i.exec(header ?? '')?.[1] ?? '';
  // Compare digests so the comparison time does not depend on the secret's length.
  if (!timingSafeEqual(await sha256Hex(given), await sha256Hex(secret))) {
    throw new AppError(401, 'invalid_admin_secret', 'The admin secret is not valid.');
  }
}

/** Creates (or finds) team, user and device. Returns their ids. */
export async function ensureTeamUserDevice(db: D1Database, body: BootstrapBody, now: number) {
  const teamId = await ensureTeam(db, body.team, body.team, now);
  const role: Role = body.role ?? ((await memberCount(db, teamId)) === 0 ? 'owner' : 'member');
  const user = await ensureUser(db, teamId, body.user, role, now);
  const deviceId = body.device ? await ensureDevice(db, teamId, user.id, body.device, now) : null;
  return { teamId, userId: user.id, role: user.role, deviceId };
}

/** The operator's guard: the bearer must be CAIRN_ADMIN_SECRET (declared at the mount in src/app.ts). */
export const requireOperator: MiddlewareHandler<AppEnv> = async (c, next) => {
  await requireAdminSecret(c.req.header('authorization'), configOf(c.env).adminSecret);
  await next();
};

/** Mounted at /api/admin/teams behind requireOperator. */
export const bootstrapRoutes = new Hono<AppEnv>().post('/', jsonBody(BootstrapBody, 10_000), async (c) => {
  const body = c.req.valid('json');
  const now = Date.now();
  const ids = await ensureTeamUserDevice(directoryDb(c.env), body, now);
  const scopes = ids.role === 'member' ? (['ingest', 'read'] as const) : (['ingest', 'read', 'admin'] as const);
  const minted = await mintToken(directoryDb(c.env), { teamId: ids.teamId, userId: ids.userId, deviceId: ids.deviceId, scopes: [...scopes], label: 'bootstrap' }, now);
  // A new team is placed on a shard by the configured rule; that shard gets a copy of its new member rows.
  await placeTeam(c.env, ids.teamId, now);
  const h = await teamDbs(c.env, ids.teamId);
  await syncTeamCopy(h);
  await writeAudit(h.team, {
    teamId: ids.teamId, actorUserId: null, action: 'team.bootstrap', target: `token:${minted.id}`,
    detail: { user: body.user, device: body.device ?? null, role: ids.role, scopes }, at: now,
  });
  return c.json({ token: minted.token, team: body.team, user: body.user, device: body.device ?? null, role: ids.role, scopes }, 201);
});
