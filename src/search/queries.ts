// The benchmark floor (local-only bench routes): one indexed query for the newest rows of a project.
import { and, count, desc, eq } from 'drizzle-orm';
import { db, type Db } from '../db/client';
import { observations, projects, teams } from '../db/schema';

/** Newest 50 observations of the team's project `key` (no visibility: an admin-only local bench), or null. */
export async function newestOfProjectKey(d: Db, teamId: number, key: string) {
  const project = await d
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.teamId, teamId), eq(projects.key, key)))
    .get();
  if (!project) return null;
  return d
    .select({
      id: observations.id,
      type: observations.type,
      title: observations.title,
      createdAt: observations.createdAt,
    })
    .from(observations)
    .where(and(eq(observations.teamId, teamId), eq(observations.projectId, project.id)))
    .orderBy(desc(observations.createdAt))
    .limit(50);
}

/** Rows and bytes of the local database (D1 reports its size with every result), for the capacity bench. */
export async function databaseSize(d1: D1Database): Promise<{ observations: number; bytes: number | null }> {
  const d = db(d1);
  const counted = await d.select({ n: count() }).from(observations).get();
  const { meta } = await d.select({ id: teams.id }).from(teams).limit(1).run();
  return { observations: counted?.n ?? 0, bytes: meta.size_after ?? null };
}
