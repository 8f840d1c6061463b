// Project administration in D1: which project a key names team-wide, rename (old key stays an alias), merge
// (every row moves in one batch, alias left behind) and visibility. Callers check visibility first (projects.ts).
import { and, count, eq } from 'drizzle-orm';
import { insertAudit, type AuditEntry } from './audit';
import { runBatch } from './batch';
import { db as dbOf, type Db } from './client';
import {
  localVectors,
  observationFiles,
  observations,
  projectAliases,
  projects,
  prompts,
  sessions,
  summaries,
} from './schema';
import type { ProjectRef } from './projects';

/** Which project (if any) a key names in the whole team, through its key or an alias. */
export async function keyOwner(d1: D1Database | Db, teamId: number, key: string): Promise<number | null> {
  const d = dbOf(d1);
  const own = await d
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.teamId, teamId), eq(projects.key, key)))
    .get();
  if (own) return own.id;
  const alias = await d
    .select({ id: projectAliases.projectId })
    .from(projectAliases)
    .where(and(eq(projectAliases.teamId, teamId), eq(projectAliases.key, key)))
    .get();
  return alias?.id ?? null;
}

/** Upserts the alias `key` → project (the alias table's one insert path). */
export const putAlias = (d: Db, teamId: number, key: string, projectId: number, now: number) =>
  d
    .insert(projectAliases)
    .values({ teamId, key, projectId, createdAt: now })
    .onConflictDoUpdate({ target: [projectAliases.teamId, projectAliases.key], set: { projectId, createdAt: now } });

/** Renames `p` to `to`; its old key becomes an alias. One batch with the audit row. */
export async function renameProject(
  d1: D1Database | Db,
  teamId: number,
  p: ProjectRef,
  to: string,
  now: number,
  audit: AuditEntry,
): Promise<void> {
  const d = dbOf(d1);
  await runBatch(d, [
    // Renaming back to one of its own old keys: that alias is no longer needed.
    d.delete(projectAliases).where(and(eq(projectAliases.teamId, teamId), eq(projectAliases.key, to))),
    d.update(projects).set({ key: to }).where(eq(projects.id, p.id)),
    putAlias(d, teamId, p.key, p.id, now),
    insertAudit(d, audit),
  ]);
}

export interface MergeCounts {
  observations: number;
  summaries: number;
  sessions: number;
  prompts: number;
}

/** How many rows of each kind a merge of `projectId` would move. */
export async function rowsOfProject(d1: D1Database | Db, teamId: number, projectId: number): Promise<MergeCounts> {
  const d = dbOf(d1);
  const n = (t: typeof observations | typeof summaries | typeof sessions | typeof prompts) =>
    d
      .select({ n: count() })
      .from(t)
      .where(and(eq(t.teamId, teamId), eq(t.projectId, projectId)));
  const [o, s, se, p] = await d.batch([n(observations), n(summaries), n(sessions), n(prompts)]);
  return { observations: o[0]?.n ?? 0, summaries: s[0]?.n ?? 0, sessions: se[0]?.n ?? 0, prompts: p[0]?.n ?? 0 };
}

/**
 * Moves every row of `from` into `into`, re-points aliases, deletes `from` and leaves its key as an alias of
 * `into`, with the audit row, in one batch. Observations, summaries and prompts are marked unembedded so the
 * vector index is rewritten with their new project.
 */
export async function mergeProjects(
  d1: D1Database | Db,
  teamId: number,
  from: ProjectRef,
  into: ProjectRef,
  now: number,
  audit: AuditEntry,
): Promise<void> {
  const d = dbOf(d1);
  const inFrom = <
    T extends typeof summaries | typeof sessions | typeof prompts | typeof observationFiles | typeof localVectors,
  >(
    t: T,
  ) => and(eq(t.teamId, teamId), eq(t.projectId, from.id));
  await runBatch(d, [
    d
      .update(observations)
      .set({ projectId: into.id, embeddedAt: null })
      .where(and(eq(observations.teamId, teamId), eq(observations.projectId, from.id))),
    d.update(summaries).set({ projectId: into.id, embeddedAt: null }).where(inFrom(summaries)),
    d.update(sessions).set({ projectId: into.id }).where(inFrom(sessions)),
    d.update(prompts).set({ projectId: into.id, embeddedAt: null }).where(inFrom(prompts)),
    d.update(observationFiles).set({ projectId: into.id }).where(inFrom(observationFiles)),
    d.update(localVectors).set({ projectId: into.id }).where(inFrom(localVectors)),
    d
      .update(projectAliases)
      .set({ projectId: into.id })
      .where(and(eq(projectAliases.teamId, teamId), eq(projectAliases.projectId, from.id))),
    d.delete(projects).where(and(eq(projects.id, from.id), eq(projects.teamId, teamId))),
    putAlias(d, teamId, from.key, into.id, now),
    insertAudit(d, audit),
  ]);
}

/** Sets a project's visibility and owner, with the audit row, in one batch. */
export async function setProjectVisibility(
  d1: D1Database | Db,
  projectId: number,
  visibility: 'team' | 'private',
  ownerUserId: number | null,
  audit: AuditEntry,
): Promise<void> {
  const d = dbOf(d1);
  await runBatch(d, [
    d.update(projects).set({ visibility, ownerUserId }).where(eq(projects.id, projectId)),
    insertAudit(d, audit),
  ]);
}
