// Project identity: which projects a caller's keys name (through the one visibility rule), and creating one
// on first ingest.
import { and, count, desc, eq, inArray, isNull, max, ne, or } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import type { Caller } from './caller';
import { db as dbOf, type Db } from './client';
import { observations, projectAliases, projects, sessions, users, type Project } from './schema';
import { groupConcat, nullsLast, scalar } from './sqlite';
import { canReadObservation, canSeeProject, type Viewer } from './visibility';

export type ProjectRef = Pick<Project, 'id' | 'key' | 'visibility' | 'ownerUserId'>;


const REF = { id: projects.id, key: projects.key, visibility: projects.visibility, ownerUserId: projects.ownerUserId };

/**
 * Keys without a remote (`local/<folder>`) belong to one user: they are stored as `local/<handle>/<folder>`
 * so that two people's `local/app` never meet, and they are private.
 */
export function storedProjectKey(key: string, handle: string): string {
  // `#` is the server's own separator for shadow projects (`<key>#<handle>`): a client's `#` is stored escaped,
  // so no key a client sends can name a shadow.
  const k = key.trim().replace(/#/g, '%23');
  if (k.startsWith('local/') && !k.startsWith(`local/${handle}/`)) return `local/${handle}/${k.slice('local/'.length)}`;
  return k;
}

/**
 * Keys only the server makes: `local/…` (a user's own folder without a remote, `local/<handle>/…`) and any
 * key holding `#` (shadow projects). Renames, merges and visibility changes may not produce or take them.
 */
export const isReservedProjectKey = (key: string): boolean => key.trim().startsWith('local/') || key.includes('#');

/**
 * When a teammate works under a key that names someone else's private project, their memory goes to a
 * private project of their own under this shadow key, so the owner's project is neither written nor revealed.
 */
export const shadowProjectKey = (key: string, handle: string) => `${key}#${handle}`;

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

/** Finds or creates the project an ingest event names. A private project of another user is never reused. */
export async function ensureProject(d1: D1Database | Db, auth: Caller, rawKey: string, now: number): Promise<ProjectRef> {
  const d = dbOf(d1);
  const key = storedProjectKey(rawKey, auth.handle);
  const visible = await resolveVisibleProjects(d, auth, [key]);
  if (visible[0]) return visible[0];
  const created = await insertOrGet(d, auth, key, key.startsWith('local/') ? 'private' : 'team', now);
  if (created.visibility === 'team' || created.ownerUserId === auth.userId) return created;
  const shadow = await insertOrGet(d, auth, shadowProjectKey(key, auth.handle), 'private', now);
  // Only the server makes `#` keys, so this holds; checked because a write must never land elsewhere.
  if (shadow.visibility !== 'private' || shadow.ownerUserId !== auth.userId) throw new Error('shadow project is not the caller\'s own');
  return shadow;
}

/** The one project INSERT, idempotent per (team, key). Add `.returning()` to learn if it was new. */
export const insertProject = (d: Db, p: Pick<typeof projects.$inferInsert, 'teamId' | 'key' | 'visibility' | 'ownerUserId' | 'createdAt'>) =>
  d.insert(projects).values(p).onConflictDoNothing({ target: [projects.teamId, projects.key] });

/** The project `key`, created (owned by the caller) if missing; answers the row that holds the key. */
async function insertOrGet(d: Db, auth: Caller, key: string, visibility: 'team' | 'private', now: number): Promise<ProjectRef> {
  await insertProject(d, { teamId: auth.teamId, key, ownerUserId: auth.userId, visibility, createdAt: now });
  const row = await d.select(REF).from(projects).where(and(eq(projects.teamId, auth.teamId), eq(projects.key, key))).get();
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
  const ofProject = (t: typeof observations | typeof sessions) => and(eq(t.teamId, projects.teamId), eq(t.projectId, projects.id));
  const lastActivity = scalar<number | null>(qb.select({ at: max(sessions.startedAt) }).from(sessions).where(ofProject(sessions)));
  const rows = await dbOf(d1)
    .select({
      key: projects.key,
      visibility: projects.visibility,
      owner: users.handle,
      created_at: projects.createdAt,
      observations: scalar<number>(qb.select({ n: count() }).from(observations).where(and(ofProject(observations), isNull(observations.deletedAt)))),
      sessions: scalar<number>(qb.select({ n: count() }).from(sessions).where(ofProject(sessions))),
      last_activity: lastActivity,
      aliases: scalar<string | null>(
        qb.select({ keys: groupConcat(projectAliases.key, ' ') }).from(projectAliases)
          .where(and(eq(projectAliases.teamId, projects.teamId), eq(projectAliases.projectId, projects.id))),
      ),
    })
    .from(projects)
    .leftJoin(users, eq(users.id, projects.ownerUserId))
    .where(canSeeProject(auth))
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
