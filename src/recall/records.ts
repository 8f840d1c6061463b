// Recall reads: shapes the records the API answers with from the queries in src/db/recall.ts (every one of
// them built on the one visibility rule).
import { projectsWithActivity } from '../db/projects';
import { contextObservationsOf, contextSummariesOf, fileHistoryOf, observationsWithContext } from '../db/recall';
import type { Viewer } from '../db/visibility';
import { jsonList } from '../lib/json-list';
import { readTokens } from './format';
import type { RecallMode } from './mode';
import type { ObservationContent, ObservationRecord, ProjectSummary } from '#shared/wire/records';
import type { ContextObservation, ContextSummary } from './render-context';
import type { Judgement } from '#shared/evidence';

/**
 * Runs a newest-first query once per project (see src/db/recall.ts for why one project at a time) and
 * merges the answers.
 */
export async function newestPerProject<T extends { id: number }>(
  projectIds: number[],
  limit: number,
  at: (row: T) => number,
  run: (projectId: number) => Promise<T[]>,
): Promise<T[]> {
  const parts = await Promise.all(projectIds.map(run));
  return parts
    .flat()
    .sort((a, b) => at(b) - at(a) || b.id - a.id)
    .slice(0, limit);
}

/**
 * Newest observations of the projects that pass the mode's allow-lists: the type must be one of the mode's,
 * and a row that has concepts needs at least one of the mode's (rows without concepts — e.g. saved with
 * `remember` — pass, since they were never classified). Superseded rows are left out of the index, and with
 * `fadedBefore` faded ones (src/db/fading.ts).
 */
export async function contextObservations(
  db: D1Database,
  viewer: Viewer,
  projectIds: number[],
  mode: RecallMode,
  limit: number,
  fadedBefore: number | null = null,
): Promise<ContextObservation[]> {
  if (!projectIds.length || limit <= 0) return [];
  const types = mode.types.map((t) => t.id);
  return newestPerProject(
    projectIds,
    limit,
    (r: ContextObservation) => r.createdAt,
    (projectId) => contextObservationsOf(db, viewer, projectId, types, mode.conceptIds, limit, fadedBefore),
  );
}

export async function contextSummaries(
  db: D1Database,
  viewer: Viewer,
  projectIds: number[],
  limit: number,
): Promise<ContextSummary[]> {
  if (!projectIds.length || limit <= 0) return [];
  return newestPerProject(
    projectIds,
    limit,
    (r: ContextSummary) => r.createdAt,
    (projectId) => contextSummariesOf(db, viewer, projectId, limit),
  );
}

export interface FileHistoryRow extends Pick<ObservationContent, 'type' | 'title' | 'filesRead' | 'filesModified'> {
  id: number;
  sessionId: number;
  createdAt: number;
  author: string;
  device?: string | null;
  /** Its evidence against the reader's checkout and the file as it is now (src/shared/evidence.ts). */
  evidence?: Judgement | null;
}

/** Observations (newest first, at most `limit`) whose read or modified files include one of `paths`. */
export async function fileHistory(
  db: D1Database,
  viewer: Viewer,
  projectIds: number[],
  paths: string[],
  limit = 100,
): Promise<FileHistoryRow[]> {
  if (!projectIds.length || !paths.length) return [];
  const rows = await newestPerProject(
    projectIds,
    limit,
    (r: Awaited<ReturnType<typeof fileHistoryOf>>[number]) => r.createdAt,
    (projectId) => fileHistoryOf(db, viewer, projectId, paths, limit),
  );
  return rows.map((r) => ({ ...r, filesRead: jsonList(r.filesRead), filesModified: jsonList(r.filesModified) }));
}

/** Full records for `wanted` ids the viewer may read, in the order asked; others are silently absent. */
export async function observationsByIds(
  db: D1Database,
  viewer: Viewer,
  wanted: number[],
): Promise<ObservationRecord[]> {
  if (!wanted.length) return [];
  const rows = await observationsWithContext(db, viewer, wanted);
  const byId = new Map(
    rows.map((r) => [
      r.id,
      {
        ...r,
        facts: jsonList(r.facts),
        concepts: jsonList(r.concepts),
        filesRead: jsonList(r.filesRead),
        filesModified: jsonList(r.filesModified),
        createdAt: new Date(r.createdAt).toISOString(),
        tokens: readTokens(r),
      } satisfies ObservationRecord,
    ]),
  );
  return wanted.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
}

/** Projects the viewer may see, with the number of observations they may read and the newest one's time. */
export async function listProjects(db: D1Database, viewer: Viewer): Promise<ProjectSummary[]> {
  const rows = await projectsWithActivity(db, viewer);
  return rows.map((r) => ({
    key: r.key,
    visibility: r.visibility,
    observations: r.observations,
    last_activity: r.last === null ? null : new Date(r.last).toISOString(),
  }));
}
