// Project identity: which projects a caller's keys name (through the one visibility rule), and creating one
// on first ingest.
import { and, count, desc, eq, inArray, isNull, like, max, ne, notLike, or } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import type { Caller } from './caller';
import { db as dbOf, type Db } from './client';
import { observations, projectAliases, projects, sessions, users, type Project } from './schema';
import { groupConcat, inJsonList, nullsLast, scalar } from './sqlite';
import { canReadObservation, canSeeProject, type Viewer } from './visibility';
import {
  chooseFoundProject,
  mayWriteProject,
  personalProjectKey,
  PERSONAL_PREFIX,
  projectLookupKeys,
  shadowProjectKey,
  storedProjectKey,
  type KeyedProject,
} from './write-policy';
import { AppError } from '../lib/errors';

export type ProjectRef = Pick<Project, 'id' | 'key' | 'visibility' | 'ownerUserId'>;

const REF = { id: projects.id, key: projects.key, visibility: projects.visibility, ownerUserId: projects.ownerUserId };

const qb = new QueryBuilder();

/**
 * Resolves keys (or their aliases) to projects the caller may read, including the caller's own shadow of
 * each key; unknown or invisible keys are left out.
 */
export async function resolveVisibleProjects(d1: D1Database | Db, auth: Caller, keys: string[]): Promise<ProjectRef[]> {
  const d = dbOf(d1);
  const out: ProjectRef[] = [];
  for (const raw of keys.slice(0, 10)) {
    const key = storedProjectKey(raw, auth.handle);
    const shadow = shadowProjectKey(key, auth.handle);
    const aliased = qb
      .select({ id: projectAliases.projectId })
      .from(projectAliases)
      .where(and(eq(projectAliases.teamId, auth.teamId), eq(projectAliases.key, key)));
    const rows = await d
      .select(REF)
      .from(projects)
      .where(
        and(
          canSeeProject(auth),
          or(eq(projects.key, key), eq(projects.key, shadow), inArray(projects.id, aliased)),
          // A shadow key matches only the caller's own private project.
          or(ne(projects.key, shadow), and(eq(projects.visibility, 'private'), eq(projects.ownerUserId, auth.userId))),
        ),
      )
      .orderBy(eq(projects.key, shadow), projects.id);
    for (const row of rows) if (!out.some((p) => p.id === row.id)) out.push(row);
  }
  return out;
}

/**
 * Finds or creates the project a write names (ingest, `remember`; import plans the same choice for many keys
 * at once): the write policy's `chooseProject`. A private project of another user is never reused.
 */
export async function ensureProject(
  d1: D1Database | Db,
  auth: Caller,
  rawKey: string,
  now: number,
  wanted: 'team' | 'private' = 'team',
  /** Throws to refuse the project (the write policy's writeRefusal), before a new one is made. */
  allow: (p: ProjectRef) => void = () => {},
): Promise<ProjectRef> {
  return ensureStoredProject(dbOf(d1), auth, storedProjectKey(rawKey, auth.handle), now, wanted, allow);
}

/**
 * The caller's personal memory (`#personal/<handle>`, private, theirs), made on first use through the same write
 * policy as any project: a row under that key that is not the caller's private project is never written into.
 */
export async function ensurePersonalProject(
  d1: D1Database | Db,
  auth: Caller,
  now: number,
  allow: (p: ProjectRef) => void = () => {},
): Promise<ProjectRef> {
  const p = await ensureStoredProject(dbOf(d1), auth, personalProjectKey(auth.handle), now, 'private', allow);
  if (p.visibility !== 'private' || p.ownerUserId !== auth.userId || p.key !== personalProjectKey(auth.handle))
    throw projectKeyUnavailable();
  return p;
}

/** ensureProject for a key already in stored form (a client's key, or one only the server makes). */
async function ensureStoredProject(
  d: Db,
  auth: Caller,
  key: string,
  now: number,
  wanted: 'team' | 'private',
  allow: (p: ProjectRef) => void,
): Promise<ProjectRef> {
  const shadow = shadowProjectKey(key, auth.handle);
  const found = await projectsByKeys(d, auth.teamId, projectLookupKeys(key, auth.handle));
  const choice = chooseFoundProject(auth, key, found, wanted);
  if (choice.kind === 'use') {
    allow(choice.project);
    return choice.project;
  }
  if (choice.kind === 'unavailable') throw projectKeyUnavailable();
  allow({ id: 0, key: choice.key, visibility: choice.visibility, ownerUserId: auth.userId });
  const made = await insertOrGet(d, auth, choice.key, choice.visibility, now);
  if (choice.key === shadow) {
    // Only the server makes `#` keys, so this holds; checked because a write must never land elsewhere.
    if (made.visibility !== 'private' || made.ownerUserId !== auth.userId) throw projectKeyUnavailable();
    return made;
  }
  if (mayWriteProject(auth, made)) return made;
  // Someone made the key their private project a moment ago: the caller's shadow, as if it had been there.
  const own = await insertOrGet(d, auth, shadow, 'private', now);
  if (own.visibility !== 'private' || own.ownerUserId !== auth.userId) throw projectKeyUnavailable();
  return own;
}

const projectKeyUnavailable = () =>
  new AppError(
    409,
    'project_key_unavailable',
    'That project key cannot be used; pick another (an admin can rename or merge projects).',
  );

/**
 * The team's projects named by `keys` (as stored) and those the keys are aliases of, each as the write policy
 * needs it. One statement each, the keys bound as one JSON parameter (import asks for hundreds at once).
 */
export async function projectsByKeys(
  d1: D1Database | Db,
  teamId: number,
  keys: readonly string[],
): Promise<{ byKey: Map<string, KeyedProject>; byAlias: Map<string, KeyedProject> }> {
  const d = dbOf(d1);
  const byKey = new Map<string, KeyedProject>();
  const byAlias = new Map<string, KeyedProject>();
  if (keys.length === 0) return { byKey, byAlias };
  // The aliases and their projects come as two selects: one row joining both would hold two columns named `key`,
  // which D1's rows (objects by column name) cannot keep apart (every alias was read as missing).
  const aliasRows = and(eq(projectAliases.teamId, teamId), inJsonList(projectAliases.key, keys));
  const [own, aliases, targets] = await d.batch([
    d
      .select(REF)
      .from(projects)
      .where(and(eq(projects.teamId, teamId), inJsonList(projects.key, keys))),
    d.select({ alias: projectAliases.key, projectId: projectAliases.projectId }).from(projectAliases).where(aliasRows),
    d
      .select(REF)
      .from(projects)
      .where(
        and(
          eq(projects.teamId, teamId),
          inArray(projects.id, d.select({ id: projectAliases.projectId }).from(projectAliases).where(aliasRows)),
        ),
      ),
  ]);
  for (const p of own) byKey.set(p.key, p);
  const byId = new Map(targets.map((p) => [p.id, p]));
  for (const { alias, projectId } of aliases) {
    const p = byId.get(projectId);
    if (p) byAlias.set(alias, p);
  }
  return { byKey, byAlias };
}

/** The one project INSERT, idempotent per (team, key). Add `.returning()` to learn if it was new. */
export const insertProject = (
  d: Db,
  p: Pick<typeof projects.$inferInsert, 'teamId' | 'key' | 'visibility' | 'ownerUserId' | 'createdAt'>,
) =>
  d
    .insert(projects)
    .values(p)
    .onConflictDoNothing({ target: [projects.teamId, projects.key] });

/** The project `key`, created (owned by the caller) if missing; answers the row that holds the key. */
async function insertOrGet(
  d: Db,
  auth: Caller,
  key: string,
  visibility: 'team' | 'private',
  now: number,
): Promise<ProjectRef> {
  await insertProject(d, { teamId: auth.teamId, key, ownerUserId: auth.userId, visibility, createdAt: now });
  const row = await d
    .select(REF)
    .from(projects)
    .where(and(eq(projects.teamId, auth.teamId), eq(projects.key, key)))
    .get();
  if (!row) throw new Error('project row vanished');
  return row;
}

/** A visible project by its stored key, an alias, or the caller's own `local/<folder>` shorthand (admin API). */
export async function findVisibleProject(d1: D1Database | Db, auth: Caller, key: string): Promise<ProjectRef | null> {
  const d = dbOf(d1);
  for (const k of new Set([key, storedProjectKey(key, auth.handle)])) {
    const aliased = qb
      .select({ id: projectAliases.projectId })
      .from(projectAliases)
      .where(and(eq(projectAliases.teamId, auth.teamId), eq(projectAliases.key, k)));
    const row = await d
      .select(REF)
      .from(projects)
      .where(and(canSeeProject(auth), or(eq(projects.key, k), inArray(projects.id, aliased))))
      .limit(1)
      .get();
    if (row) return row;
  }
  return null;
}

/** Every project the caller may see, with counts, newest activity first (admin API listing). */
export async function listVisibleProjects(d1: D1Database | Db, auth: Caller) {
  // Each count names the team as well as the project: the (team, project, …) indexes serve only that pair, and
  // without the team every project's count scanned the whole table (2.8 s for 100 projects at 100k rows).
  const ofProject = (t: typeof observations | typeof sessions) =>
    and(eq(t.teamId, projects.teamId), eq(t.projectId, projects.id));
  const lastActivity = scalar<number | null>(
    qb
      .select({ at: max(sessions.startedAt) })
      .from(sessions)
      .where(ofProject(sessions)),
  );
  const rows = await dbOf(d1)
    .select({
      // Admins start per-project jobs (consolidate-project) by this id.
      id: projects.id,
      key: projects.key,
      visibility: projects.visibility,
      owner: users.handle,
      created_at: projects.createdAt,
      observations: scalar<number>(
        qb
          .select({ n: count() })
          .from(observations)
          .where(and(ofProject(observations), isNull(observations.deletedAt))),
      ),
      sessions: scalar<number>(qb.select({ n: count() }).from(sessions).where(ofProject(sessions))),
      last_activity: lastActivity,
      aliases: scalar<string | null>(
        qb
          .select({ keys: groupConcat(projectAliases.key, ' ') })
          .from(projectAliases)
          .where(and(eq(projectAliases.teamId, projects.teamId), eq(projectAliases.projectId, projects.id))),
      ),
    })
    .from(projects)
    .leftJoin(users, eq(users.id, projects.ownerUserId))
    // An admin view: a person's own memory is in none (admins see counts: personalMemoryCounts).
    .where(and(canSeeProject(auth), notPersonal()))
    .orderBy(nullsLast(lastActivity), desc(lastActivity), projects.key);
  return rows.map((p) => ({ ...p, aliases: p.aliases ? p.aliases.split(' ') : [] }));
}

/** Projects the viewer may see, with the number of observations they may read and the newest one's time (recall). */
export async function projectsWithActivity(d1: D1Database | Db, viewer: Viewer) {
  const last = max(observations.createdAt);
  return dbOf(d1)
    .select({ key: projects.key, visibility: projects.visibility, observations: count(observations.id), last })
    .from(projects)
    .leftJoin(observations, and(eq(observations.projectId, projects.id), canReadObservation(viewer)))
    .where(canSeeProject(viewer))
    .groupBy(projects.id)
    .orderBy(nullsLast(last), desc(last), projects.key);
}

/** Projects that are not someone's personal memory (team views: the admin's project list, the team export). */
export const notPersonal = () => notLike(projects.key, `${PERSONAL_PREFIX}%`);

/**
 * How many current notes each member keeps in their personal memory, by handle: what admins see of it (counts, never
 * text). One statement.
 */
export async function personalMemoryCounts(d1: D1Database | Db, teamId: number): Promise<Map<string, number>> {
  const rows = await dbOf(d1)
    .select({ key: projects.key, n: count(observations.id) })
    .from(projects)
    .leftJoin(
      observations,
      and(
        eq(observations.teamId, projects.teamId),
        eq(observations.projectId, projects.id),
        isNull(observations.deletedAt),
      ),
    )
    .where(and(eq(projects.teamId, teamId), like(projects.key, `${PERSONAL_PREFIX}%`)))
    .groupBy(projects.id);
  return new Map(rows.map((r) => [r.key.slice(PERSONAL_PREFIX.length), r.n]));
}

/** The caller's personal project, when they have one (reads only). */
export async function personalProjectOf(d1: D1Database | Db, auth: Caller): Promise<ProjectRef | null> {
  const row = await dbOf(d1)
    .select(REF)
    .from(projects)
    .where(
      and(
        eq(projects.teamId, auth.teamId),
        eq(projects.key, personalProjectKey(auth.handle)),
        eq(projects.visibility, 'private'),
        eq(projects.ownerUserId, auth.userId),
      ),
    )
    .get();
  return row ?? null;
}

/**
 * ensurePersonalProject for a member known by id (an observer turn knows its author's id, not their handle): the
 * handle is read from the team's member rows on this database (a shard keeps a copy). Null when the member is gone.
 */
export async function ensureMemberPersonalProject(
  d1: D1Database | Db,
  teamId: number,
  userId: number,
  now: number,
): Promise<ProjectRef | null> {
  const d = dbOf(d1);
  const member = await d
    .select({ handle: users.handle })
    .from(users)
    .where(and(eq(users.teamId, teamId), eq(users.id, userId), isNull(users.removedAt)))
    .get();
  return member ? ensurePersonalProject(d, { teamId, userId, handle: member.handle }, now) : null;
}
