// The benchmark floor (local-only bench routes): one indexed query for the newest rows of a project.
import { and, desc, eq } from 'drizzle-orm';
import type { Db } from './client';
import { observations, projects } from './schema';

/** Newest 50 observations of the team's project `key` (no visibility: an admin-only local bench), or null. */
export async function newestOfProjectKey(d: Db, teamId: number, key: string) {
  const project = await d.select({ id: projects.id }).from(projects).where(and(eq(projects.teamId, teamId), eq(projects.key, key))).get();
  if (!project) return null;
  return d
    .select({ id: observations.id, type: observations.type, title: observations.title, createdAt: observations.createdAt })
    .from(observations)
    .where(and(eq(observations.teamId, teamId), eq(observations.projectId, project.id)))
    .orderBy(desc(observations.createdAt))
    .limit(50);
}

/** Rows and bytes of the local database (D1 reports its size with every result), for the capacity bench. */
export async function databaseSize(raw: D1Database): Promise<{ observations: number; bytes: number | null }> {
  const count = await raw.prepare('SELECT COUNT(*) AS n FROM observations').first<{ n: number }>();
  const meta = await raw.prepare('SELECT 1').run();
  return { observations: count?.n ?? 0, bytes: meta.meta.size_after ?? null };
}
