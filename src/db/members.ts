// Team members, devices and tokens as the admin API manages them. They live on the directory; their audit rows
// on the team's shard (writeTeam: one batch when that is the directory, src/db/shards.ts).
import { and, count, desc, eq, isNotNull, isNull, type SQL } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import { insertAudit, type AuditEntry } from './audit';
import { db as dbOf, type Db } from './client';
import { devices, tokens, users, type User } from './schema';
import { hasListItem, scalar, withoutListItem } from './sqlite';
import { insertUser, writeTeam, type TeamDbs } from './teams';
import type { insertToken } from './tokens';

const qb = new QueryBuilder();

export type UserRow = { id: number; handle: string; role: User['role']; removed_at: number | null };

export function findUser(d1: D1Database | Db, teamId: number, handle: string): Promise<UserRow | undefined> {
  return dbOf(d1)
    .select({ id: users.id, handle: users.handle, role: users.role, removed_at: users.removedAt })
    .from(users)
    .where(and(eq(users.teamId, teamId), eq(users.handle, handle)))
    .get();
}

export async function ownerCount(d1: D1Database | Db, teamId: number): Promise<number> {
  const row = await dbOf(d1)
    .select({ n: count() })
    .from(users)
    .where(and(eq(users.teamId, teamId), eq(users.role, 'owner'), isNull(users.removedAt)))
    .get();
  return row?.n ?? 0;
}

/** Members (removed ones last) with their device and active-token counts. */
export function listUsers(d1: D1Database | Db, teamId: number) {
  return dbOf(d1)
    .select({
      handle: users.handle,
      role: users.role,
      created_at: users.createdAt,
      removed_at: users.removedAt,
      devices: scalar<number>(qb.select({ n: count() }).from(devices).where(eq(devices.userId, users.id))),
      active_tokens: scalar<number>(
        qb
          .select({ n: count() })
          .from(tokens)
          .where(and(eq(tokens.userId, users.id), isNull(tokens.revokedAt))),
      ),
    })
    .from(users)
    .where(eq(users.teamId, teamId))
    .orderBy(isNotNull(users.removedAt), users.handle);
}

/** Devices of current members with their active-token counts. */
export function listDevices(d1: D1Database | Db, teamId: number) {
  return dbOf(d1)
    .select({
      id: devices.id,
      user: users.handle,
      name: devices.name,
      created_at: devices.createdAt,
      last_seen_at: devices.lastSeenAt,
      active_tokens: scalar<number>(
        qb
          .select({ n: count() })
          .from(tokens)
          .where(and(eq(tokens.deviceId, devices.id), isNull(tokens.revokedAt))),
      ),
    })
    .from(devices)
    .innerJoin(users, eq(users.id, devices.userId))
    .where(and(eq(devices.teamId, teamId), isNull(users.removedAt)))
    .orderBy(users.handle, devices.name);
}

/** Adds a member, or restores a removed one with a new role. */
export async function addUser(
  h: TeamDbs,
  handle: string,
  role: User['role'],
  existingId: number | null,
  now: number,
  audit: AuditEntry,
): Promise<void> {
  const d = dbOf(h.dir);
  const write =
    existingId !== null
      ? d.update(users).set({ role, removedAt: null }).where(eq(users.id, existingId))
      : insertUser(d, { teamId: h.teamId, handle, role, createdAt: now });
  await writeTeam(h, [write], [insertAudit(dbOf(h.team), audit)]);
}

/**
 * Changes a member's role; a member or reader cannot hold admin credentials, so demotion strips `admin` from their
 * tokens.
 */
export async function setRole(h: TeamDbs, userId: number, role: User['role'], audit: AuditEntry): Promise<void> {
  const d = dbOf(h.dir);
  const strip = d
    .update(tokens)
    .set({ scopes: withoutListItem(tokens.scopes, 'admin') })
    .where(and(eq(tokens.userId, userId), hasListItem(tokens.scopes, 'admin')));
  await writeTeam(
    h,
    [
      d.update(users).set({ role }).where(eq(users.id, userId)),
      ...(role === 'member' || role === 'reader' ? [strip] : []),
    ],
    [insertAudit(dbOf(h.team), audit)],
  );
}

/** Removes a member and revokes their live tokens; answers how many were revoked. */
export async function removeUser(h: TeamDbs, userId: number, now: number, audit: AuditEntry): Promise<number> {
  const d = dbOf(h.dir);
  const [, revoked] = (await writeTeam(
    h,
    [
      d.update(users).set({ removedAt: now }).where(eq(users.id, userId)),
      d
        .update(tokens)
        .set({ revokedAt: now })
        .where(and(eq(tokens.userId, userId), isNull(tokens.revokedAt))),
    ],
    [insertAudit(dbOf(h.team), audit)],
  )) as D1Result[];
  return revoked?.meta.changes ?? 0;
}

const TOKEN_FIELDS = {
  id: tokens.id,
  prefix: tokens.prefix,
  label: tokens.label,
  scopes: tokens.scopes,
  created_at: tokens.createdAt,
  last_used_at: tokens.lastUsedAt,
  expires_at: tokens.expiresAt,
  revoked_at: tokens.revokedAt,
  user_id: tokens.userId,
  device_id: tokens.deviceId,
  handle: users.handle,
  role: users.role,
  removed_at: users.removedAt,
  device: devices.name,
};

function selectTokens(d: Db, where: SQL | undefined) {
  return d
    .select(TOKEN_FIELDS)
    .from(tokens)
    .innerJoin(users, eq(users.id, tokens.userId))
    .leftJoin(devices, eq(devices.id, tokens.deviceId))
    .where(where);
}

export type TokenRow = NonNullable<Awaited<ReturnType<typeof teamToken>>>;

/** One token of the team with its user and device (never the hash). */
export function teamToken(d1: D1Database | Db, teamId: number, id: number) {
  return selectTokens(dbOf(d1), and(eq(tokens.teamId, teamId), eq(tokens.id, id))).get();
}

/** The team's tokens, newest first (at most 500), optionally one user's and revoked ones too. */
export function listTokens(d1: D1Database | Db, teamId: number, handle: string | null, includeRevoked: boolean) {
  return selectTokens(
    dbOf(d1),
    and(
      eq(tokens.teamId, teamId),
      handle === null ? undefined : eq(users.handle, handle),
      includeRevoked ? undefined : isNull(tokens.revokedAt),
    ),
  )
    .orderBy(desc(tokens.createdAt), desc(tokens.id))
    .limit(500);
}

export async function revokeToken(h: TeamDbs, tokenId: number, now: number, audit: AuditEntry): Promise<void> {
  const d = dbOf(h.dir);
  await writeTeam(
    h,
    [
      d
        .update(tokens)
        .set({ revokedAt: now })
        .where(and(eq(tokens.id, tokenId), isNull(tokens.revokedAt))),
    ],
    [insertAudit(dbOf(h.team), audit)],
  );
}

/** Stores the new token (`insert`, from auth/tokens.ts) and revokes the old one in one batch; answers the new id. */
export async function rotateToken(
  h: TeamDbs,
  insert: ReturnType<typeof insertToken>,
  oldId: number,
  now: number,
  audit: AuditEntry,
): Promise<number> {
  const d = dbOf(h.dir);
  const [inserted] = (await writeTeam(
    h,
    [insert, d.update(tokens).set({ revokedAt: now }).where(eq(tokens.id, oldId))],
    [insertAudit(dbOf(h.team), audit)],
  )) as [{ id: number }[]];
  return inserted[0]!.id;
}

/** A member's role on the team's own database (its copy of users); null when removed or unknown. */
export async function activeRole(d1: D1Database | Db, teamId: number, userId: number): Promise<User['role'] | null> {
  const row = await dbOf(d1)
    .select({ role: users.role })
    .from(users)
    .where(and(eq(users.teamId, teamId), eq(users.id, userId), isNull(users.removedAt)))
    .get();
  return row?.role ?? null;
}
