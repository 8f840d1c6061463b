// Teams, their members' rows and devices in D1: the insert paths (idempotent), settings and the audit listing.
import { and, count, desc, eq, lt, or, type SQL } from 'drizzle-orm';
import { insertAudit, type AuditEntry } from './audit';
import { db as dbOf, type Db } from './client';
import { auditLog, devices, teams, users, type User } from './schema';
import { writeTeam, type TeamDbs } from './shards';
import { startsWithDotted } from './sqlite';

/** The team named `slug`, created if missing; answers its id and whether this call created it. */
export async function ensureTeam(d1: D1Database | Db, slug: string, name: string, now: number): Promise<{ id: number; created: boolean }> {
  const d = dbOf(d1);
  const [made] = await d.insert(teams).values({ slug, name, createdAt: now }).onConflictDoNothing({ target: teams.slug }).returning({ id: teams.id });
  if (made) return { id: made.id, created: true };
  const row = await d.select({ id: teams.id }).from(teams).where(eq(teams.slug, slug)).get();
  if (!row) throw new Error('team row vanished');
  return { id: row.id, created: false };
}

export async function memberCount(d1: D1Database | Db, teamId: number): Promise<number> {
  const row = await dbOf(d1).select({ n: count() }).from(users).where(eq(users.teamId, teamId)).get();
  return row?.n ?? 0;
}

/** The one user INSERT (idempotent per team and handle); answers the row that holds the handle. */
export async function ensureUser(d1: D1Database | Db, teamId: number, handle: string, role: User['role'], now: number): Promise<Pick<User, 'id' | 'role'>> {
  const d = dbOf(d1);
  await d.insert(users).values({ teamId, handle, role, createdAt: now }).onConflictDoNothing({ target: [users.teamId, users.handle] });
  const row = await d.select({ id: users.id, role: users.role }).from(users).where(and(eq(users.teamId, teamId), eq(users.handle, handle))).get();
  if (!row) throw new Error('user row vanished');
  return row;
}

/** The one device INSERT (idempotent per team, user and name); answers the device's id. */
export async function ensureDevice(d1: D1Database | Db, teamId: number, userId: number, name: string, now: number): Promise<number> {
  const d = dbOf(d1);
  await d.insert(devices).values({ teamId, userId, name, createdAt: now }).onConflictDoNothing({ target: [devices.teamId, devices.userId, devices.name] });
  const row = await d
    .select({ id: devices.id })
    .from(devices)
    .where(and(eq(devices.teamId, teamId), eq(devices.userId, userId), eq(devices.name, name)))
    .get();
  if (!row) throw new Error('device row vanished');
  return row.id;
}

/** The team's settings JSON as stored. */
export async function teamSettingsText(d1: D1Database | Db, teamId: number): Promise<string | undefined> {
  const row = await dbOf(d1).select({ settings: teams.settings }).from(teams).where(eq(teams.id, teamId)).get();
  return row?.settings;
}

/** Replaces the team's settings (directory) with the audit row (the team's shard); see writeTeam. */
export async function writeTeamSettings(h: TeamDbs, settings: Record<string, unknown>, audit: AuditEntry): Promise<void> {
  await writeTeam(h, [dbOf(h.dir).update(teams).set({ settings: JSON.stringify(settings) }).where(eq(teams.id, h.teamId))], [insertAudit(dbOf(h.team), audit)]);
}

/** Slug, name and creation time of the team. */
export function teamInfo(d1: D1Database | Db, teamId: number) {
  return dbOf(d1).select({ slug: teams.slug, name: teams.name, created_at: teams.createdAt }).from(teams).where(eq(teams.id, teamId)).get();
}

/**
 * A page of the team's audit log, newest first: before `before` (an id), and for `action` the action itself
 * or any `action.*` below it.
 */
export function auditPage(d1: D1Database | Db, teamId: number, q: { before?: number | null; action?: string | null; limit: number }) {
  const action: SQL | undefined = q.action ? or(eq(auditLog.action, q.action), startsWithDotted(auditLog.action, q.action)) : undefined;
  return dbOf(d1)
    .select({ id: auditLog.id, created_at: auditLog.createdAt, actor: users.handle, action: auditLog.action, target: auditLog.target, detail: auditLog.detail })
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
