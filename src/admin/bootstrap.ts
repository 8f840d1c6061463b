// POST /api/admin/teams: the operator (CAIRN_ADMIN_SECRET) creates a team, its first user and device,
// and gets a token for them. Idempotent on names: whatever already exists is reused.
// POST /api/admin/teams/:slug/move: the operator moves a team to another D1 database.
import { configOf } from '../config';
import { Hono, type MiddlewareHandler } from 'hono';
import * as z from 'zod';
import { mintToken } from '../auth/tokens';
import type { Role } from '../auth/types';
import type { AppEnv } from '../auth/types';
import { sha256Hex, timingSafeEqual } from '../lib/crypto';
import { AppError, notFound } from '../lib/errors';
import { Name } from '../lib/names';
import { jsonBody, parseWith } from '../lib/validate';
import { writeAudit } from '../audit/audit';
import { SHARD_MEMO_MS, boundShards, directoryDb, openShards, placeTeam, syncTeamCopy, teamDbs } from '../db/shards';
import { ensureDevice, ensureTeam, ensureUser, memberCount, teamIdBySlug } from '../db/teams';
import { findJob, startJob } from '../jobs/start';
import { moveJob } from '../transfer/move-job';
import { wireJob } from '../jobs/start';

export const MoveBody = z.object({ shard: z.string().trim().min(1).max(20), force: z.boolean().optional() });

export const BootstrapBody = z.object({
  team: Name,
  user: Name,
  device: Name.optional(),
  role: z.enum(['owner', 'admin', 'member', 'reader']).optional(),
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
  const { id: teamId, created } = await ensureTeam(db, body.team, body.team, now);
  const role: Role = body.role ?? ((await memberCount(db, teamId)) === 0 ? 'owner' : 'member');
  const user = await ensureUser(db, teamId, body.user, role, now);
  const deviceId = body.device ? await ensureDevice(db, teamId, user.id, body.device, now) : null;
  return { teamId, created, userId: user.id, role: user.role, deviceId };
}

/** The operator's guard: the bearer must be CAIRN_ADMIN_SECRET (declared at the mount in src/app.ts). */
export const requireOperator: MiddlewareHandler<AppEnv> = async (c, next) => {
  await requireAdminSecret(c.req.header('authorization'), configOf(c.env).adminSecret);
  await next();
};

/** Mounted at /api/admin/teams behind requireOperator. */
export const bootstrapRoutes = new Hono<AppEnv>()
  .post('/', jsonBody(BootstrapBody, 10_000), async (c) => {
    const body = c.req.valid('json');
    const now = Date.now();
    // A placement rule naming an unbound database fails here, before anything is written.
    openShards(c.env);
    const ids = await ensureTeamUserDevice(directoryDb(c.env), body, now);
    const scopes =
      ids.role === 'owner' || ids.role === 'admin'
        ? (['ingest', 'read', 'admin'] as const)
        : (['ingest', 'read'] as const);
    const minted = await mintToken(
      directoryDb(c.env),
      { teamId: ids.teamId, userId: ids.userId, deviceId: ids.deviceId, scopes: [...scopes], label: 'bootstrap' },
      now,
    );
    // A new team is placed on a shard by the configured rule (an existing one stays where it is); the team's
    // shard gets a copy of its member rows.
    if (ids.created) await placeTeam(c.env, ids.teamId, now);
    const h = await teamDbs(c.env, ids.teamId);
    await syncTeamCopy(h);
    await writeAudit(h.team, {
      teamId: ids.teamId,
      actorUserId: null,
      action: 'team.bootstrap',
      target: `token:${minted.id}`,
      detail: { user: body.user, device: body.device ?? null, role: ids.role, scopes },
      at: now,
    });
    return c.json(
      { token: minted.token, team: body.team, user: body.user, device: body.device ?? null, role: ids.role, scopes },
      201,
    );
  })

  /**
   * Moves a team to another D1 database: `{"shard": "DB_1", "force"?: true}` starts a `move-team` job in the
   * team's lane (src/transfer/move-job.ts) and answers it at once (202); GET /:slug/jobs/:id follows it. The
   * team's writes are refused (503 `team_moving`) while it runs; it moves once its sessions hold nothing (or
   * at once with `force`), and fails with `team_busy` after ten minutes of busy sessions. See docs/capacity.md.
   */
  .post('/:slug/move', jsonBody(MoveBody, 1_000), async (c) => {
    const slug = parseWith(Name, c.req.param('slug'), 'not_found');
    const { shard, force } = c.req.valid('json');
    const bound = boundShards(c.env);
    if (!bound.includes(shard))
      throw new AppError(
        400,
        'unknown_shard',
        `"${shard}" is not a D1 binding of this server (bound: ${bound.join(', ')}).`,
      );
    const teamId = await teamIdBySlug(directoryDb(c.env), slug);
    if (teamId === undefined) throw notFound('team');
    const job = await startJob(c.env, moveJob, teamId, { to: shard, force: force ?? false, settleMs: SHARD_MEMO_MS });
    return c.json({ team: slug, job: wireJob(job) }, 202);
  })
  .get('/:slug/jobs/:id', async (c) => {
    const slug = parseWith(Name, c.req.param('slug'), 'not_found');
    const teamId = await teamIdBySlug(directoryDb(c.env), slug);
    if (teamId === undefined) throw notFound('team');
    const job = await findJob(c.env, teamId, c.req.param('id'));
    if (!job) throw notFound('job');
    return c.json({ team: slug, job: wireJob(job) });
  });
