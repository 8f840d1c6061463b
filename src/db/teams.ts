// Teams, their members' rows and devices in D1: the insert paths (idempotent), the copy of those rows a team's
// shard keeps (src/db/shards.ts), settings and the audit listing.
import { and, asc, count, desc, eq, gt, lt, or, type SQL } from 'drizzle-orm';
import { insertAudit, type AuditEntry } from './audit';
import { runBatch, type BatchItem } from './batch';
import { db as dbOf, type Db } from './client';
import { auditLog, devices, teams, users, type Device, type Team, type User } from './schema';
import { excluded, startsWithDotted } from './sqlite';

// The one INSERT of each table; callers add their conflict clause.
const teamInsert = (d: Db, row: Pick<Team, 'slug' | 'name' | 'createdAt'> & Partial<Team>) =>
  d.insert(teams).values(row);
const userInsert = (d: Db, row: Pick<User, 'teamId' | 'handle' | 'role' | 'createdAt'> & Partial<User>) =>
  d.insert(users).values(row);
const deviceInsert = (d: Db, row: Pick<Device, 'teamId' | 'userId' | 'name' | 'createdAt'> & Partial<Device>) =>
  d.insert(devices).values(row);

/** The team named `slug`, created if missing; answers its id and whether this call created it. */
export async function ensureTeam(
  d1: D1Database | Db,
  slug: string,
  name: string,
  now: number,
): Promise<{ id: number; created: boolean }> {
  const d = dbOf(d1);
  const [made] = await teamInsert(d, { slug, name, createdAt: now })
    .onConflictDoNothing({ target: teams.slug })
    .returning({ id: teams.id });
  if (made) return { id: made.id, created: true };
  const row = await d.select({ id: teams.id }).from(teams).where(eq(teams.slug, slug)).get();
  if (!row) throw new Error('team row vanished');
  return { id: row.id, created: false };
}

export async function memberCount(d1: D1Database | Db, teamId: number): Promise<number> {
  const row = await dbOf(d1).select({ n: count() }).from(users).where(eq(users.teamId, teamId)).get();
  return row?.n ?? 0;
}

/** The one user INSERT, idempotent per (team, handle). Batchable; add `.returning()` to learn if it was new. */
export const insertUser = (d: Db, u: Pick<User, 'teamId' | 'handle' | 'role' | 'createdAt'>) =>
  userInsert(d, u).onConflictDoNothing({ target: [users.teamId, users.handle] });

/** The user with `handle`, created if missing; answers the row that holds the handle. */
export async function ensureUser(
  d1: D1Database | Db,
  teamId: number,
  handle: string,
  role: User['role'],
  now: number,
): Promise<Pick<User, 'id' | 'role'>> {
  const d = dbOf(d1);
  await insertUser(d, { teamId, handle, role, createdAt: now });
  const row = await d
    .select({ id: users.id, role: users.role })
    .from(users)
    .where(and(eq(users.teamId, teamId), eq(users.handle, handle)))
    .get();
  if (!row) throw new Error('user row vanished');
  return row;
}

/** The one device INSERT (idempotent per team, user and name); answers the device's id. */
export async function ensureDevice(
  d1: D1Database | Db,
  teamId: number,
  userId: number,
  name: string,
  now: number,
): Promise<number> {
  const d = dbOf(d1);
  await deviceInsert(d, { teamId, userId, name, createdAt: now }).onConflictDoNothing({
    target: [devices.teamId, devices.userId, devices.name],
  });
  const row = await d
    .select({ id: devices.id })
    .from(devices)
    .where(and(eq(devices.teamId, teamId), eq(devices.userId, userId), eq(devices.name, name)))
    .get();
  if (!row) throw new Error('device row vanished');
  return row.id;
}

/** The directory and the team's shard (src/db/shards.ts `teamDbs`): the same database for a team on `DB`. */
export interface TeamDbs {
  teamId: number;
  dir: D1Database;
  team: D1Database;
}

/**
 * Directory writes, then the shard's: its copy of the team's directory rows refreshed, then `teamQueries`.
 * When the team lives on the directory it is one batch, all-or-nothing, exactly as before sharding; across
 * two databases there is no shared transaction, so the directory (the source) is written first and a failed
 * second half leaves a copy that the next write of the team refreshes. Answers each query's result, in order.
 */
export async function writeTeam(h: TeamDbs, dirQueries: BatchItem[], teamQueries: BatchItem[]): Promise<unknown[]> {
  if (h.dir === h.team) return runBatch(dbOf(h.dir), [...dirQueries, ...teamQueries]);
  const first = await runBatch(dbOf(h.dir), dirQueries);
  const copy = await copyQueries(h);
  const second = await runBatch(dbOf(h.team), [...copy, ...teamQueries]);
  return [...first, ...second.slice(copy.length)];
}

/** Refreshes the shard's copy of the team's directory rows (nothing when the team lives on the directory). */
export async function syncTeamCopy(h: TeamDbs): Promise<void> {
  if (h.dir !== h.team) await runBatch(dbOf(h.team), await copyQueries(h));
}

/**
 * Upserts of the team's teams, users and devices rows from the directory into the shard, by id: memory rows
 * reference them (foreign keys) and name their authors and devices (joins).
 */
async function copyQueries(h: TeamDbs): Promise<BatchItem[]> {
  const [dir, team] = [dbOf(h.dir), dbOf(h.team)];
  const [teamRows, userRows, deviceRows] = await dir.batch([
    dir.select().from(teams).where(eq(teams.id, h.teamId)),
    dir.select().from(users).where(eq(users.teamId, h.teamId)),
    dir.select().from(devices).where(eq(devices.teamId, h.teamId)),
  ]);
  return [
    ...teamRows.map((r) =>
      teamInsert(team, r).onConflictDoUpdate({
        target: teams.id,
        set: { slug: excluded(teams.slug), name: excluded(teams.name), settings: excluded(teams.settings) },
      }),
    ),
    ...userRows.map((r) =>
      userInsert(team, r).onConflictDoUpdate({
        target: users.id,
        set: { handle: excluded(users.handle), role: excluded(users.role), removedAt: excluded(users.removedAt) },
      }),
    ),
    ...deviceRows.map((r) =>
      deviceInsert(team, r).onConflictDoUpdate({ target: devices.id, set: { name: excluded(devices.name) } }),
    ),
  ];
}

/** The team's settings JSON as stored. */
export async function teamSettingsText(d1: D1Database | Db, teamId: number): Promise<string | undefined> {
  const row = await dbOf(d1).select({ settings: teams.settings }).from(teams).where(eq(teams.id, teamId)).get();
  return row?.settings;
}

/** Replaces the team's settings (directory) with the audit row (the team's shard); see writeTeam. */
export async function writeTeamSettings(
  h: TeamDbs,
  settings: Record<string, unknown>,
  audit: AuditEntry,
): Promise<void> {
  await writeTeam(
    h,
    [
      dbOf(h.dir)
        .update(teams)
        .set({ settings: JSON.stringify(settings) })
        .where(eq(teams.id, h.teamId)),
    ],
    [insertAudit(dbOf(h.team), audit)],
  );
}

/** Slug, name and creation time of the team. */
export function teamInfo(d1: D1Database | Db, teamId: number) {
  return dbOf(d1)
    .select({ slug: teams.slug, name: teams.name, created_at: teams.createdAt })
    .from(teams)
    .where(eq(teams.id, teamId))
    .get();
}

/**
 * A page of the team's audit log, newest first: before `before` (an id), and for `action` the action itself
 * or any `action.*` below it.
 */
export function auditPage(
  d1: D1Database | Db,
  teamId: number,
  q: { before?: number | null; action?: string | null; limit: number },
) {
  const action: SQL | undefined = q.action
    ? or(eq(auditLog.action, q.action), startsWithDotted(auditLog.action, q.action))
    : undefined;
  return dbOf(d1)
    .select({
      id: auditLog.id,
      created_at: auditLog.createdAt,
      actor: users.handle,
      action: auditLog.action,
      target: auditLog.target,
      detail: auditLog.detail,
    })
    .from(auditLog)
    .leftJoin(users, and(eq(users.id, auditLog.actorUserId), eq(users.teamId, auditLog.teamId)))
    .where(and(eq(auditLog.teamId, teamId), q.before == null ? undefined : lt(auditLog.id, q.before), action))
    .orderBy(desc(auditLog.id))
    .limit(q.limit);
}

/** The id of the team named `slug`, if there is one. */
export async function teamIdBySlug(d1: D1Database | Db, slug: string): Promise<number | undefined> {
  const row = await dbOf(d1).select({ id: teams.id }).from(teams).where(eq(teams.slug, slug)).get();
  return row?.id;
}

/** Up to `limit` team ids above `afterId`, ascending (the daily dispatcher pages through every team by id). */
export async function teamIdsAfter(d1: D1Database | Db, afterId: number, limit: number): Promise<number[]> {
  const rows = await dbOf(d1)
    .select({ id: teams.id })
    .from(teams)
    .where(gt(teams.id, afterId))
    .orderBy(asc(teams.id))
    .limit(limit);
  return rows.map((r) => r.id);
}

/** The first team with an id above `afterId`, or null (jobs that visit every team page through them by id). */
export async function nextTeamId(d1: D1Database | Db, afterId: number): Promise<number | null> {
  const row = await dbOf(d1)
    .select({ id: teams.id })
    .from(teams)
    .where(gt(teams.id, afterId))
    .orderBy(asc(teams.id))
    .limit(1)
    .get();
  return row?.id ?? null;
}
