// D1 reads behind recall: every statement starts from the shared visibility predicate (src/db/visibility.ts).
import { projectsWithActivity } from '../db/projects';
import { visibleObservations, visibleSummaries, type Viewer } from '../db/visibility';
import { jsonList, readTokens } from './format';
import type { RecallMode } from './mode';
import type { ObservationRecord, ProjectSummary } from './record-types';
import type { ContextObservation, ContextSummary } from './render-context';

export type { ObservationRecord, ProjectSummary } from './record-types';

type Param = string | number | null;

async function all<T>(db: D1Database, sql: string, params: Param[]): Promise<T[]> {
  const { results } = await db.prepare(sql).bind(...params).all<T>();
  return results;
}

const ids = (projectIds: number[]) => JSON.stringify(projectIds);

/**
 * Runs a newest-first query once per project (`project_id = ?` lets SQLite walk the (team, project, time)
 * index and stop after `limit` rows; an IN-list makes it scan the whole team's time index instead) and
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
 * `remember` — pass, since they were never classified). Superseded rows are left out of the index.
 */
export async function contextObservations(
  db: D1Database,
  viewer: Viewer,
  projectIds: number[],
  mode: RecallMode,
  limit: number,
): Promise<ContextObservation[]> {
  if (!projectIds.length || limit <= 0) return [];
  const vis = visibleObservations(viewer, 'o');
  const types = JSON.stringify(mode.types.map((t) => t.id));
  const concepts = JSON.stringify(mode.conceptIds);
  // Columns are aliased to ContextObservation's names, so rows need no mapping.
  return newestPerProject(projectIds, limit, (r: ContextObservation) => r.createdAt, (projectId) =>
    all<ContextObservation>(
      db,
      `SELECT o.id, o.created_at AS createdAt, o.type, o.title, o.subtitle, o.narrative, o.facts,
              o.discovery_tokens AS discoveryTokens, u.handle AS author
         FROM observations o JOIN users u ON u.id = o.author_user_id
        WHERE o.project_id = ? AND ${vis.sql} AND o.superseded_by IS NULL
          AND o.type IN (SELECT value FROM json_each(?))
          AND (o.concepts = '[]' OR EXISTS (SELECT 1 FROM json_each(o.concepts) c WHERE c.value IN (SELECT value FROM json_each(?))))
        ORDER BY o.created_at DESC, o.id DESC LIMIT ?`,
      [projectId, ...vis.params, types, concepts, limit],
    ),
  );
}

export async function contextSummaries(db: D1Database, viewer: Viewer, projectIds: number[], limit: number): Promise<ContextSummary[]> {
  if (!projectIds.length || limit <= 0) return [];
  const vis = visibleSummaries(viewer, 's');
  return newestPerProject(projectIds, limit, (r: ContextSummary) => r.createdAt, (projectId) =>
    all<ContextSummary>(
      db,
      `SELECT s.id, s.created_at AS createdAt, s.request, s.investigated, s.learned, s.completed, s.next_steps AS nextSteps,
              u.handle AS author
         FROM summaries s JOIN users u ON u.id = s.author_user_id
        WHERE s.project_id = ? AND ${vis.sql}
        ORDER BY s.created_at DESC, s.id DESC LIMIT ?`,
      [projectId, ...vis.params, limit],
    ),
  );
}

export interface FileHistoryRow {
  id: number;
  sessionId: number;
  createdAt: number;
  type: string;
  title: string | null;
  filesRead: string[];
  filesModified: string[];
  author: string;
}

/** Observations (newest first, at most `limit`) whose read or modified files include one of `paths`. */
export async function fileHistory(db: D1Database, viewer: Viewer, projectIds: number[], paths: string[], limit = 100): Promise<FileHistoryRow[]> {
  if (!projectIds.length || !paths.length) return [];
  const vis = visibleObservations(viewer, 'o');
  type Row = { id: number; session_id: number; created_at: number; type: string; title: string | null; files_read: string; files_modified: string; author: string };
  // Driven from the file index (CROSS JOIN keeps observation_files as the outer loop), one project at a time.
  const rows = await newestPerProject(projectIds, limit, (r: Row) => r.created_at, (projectId) =>
    all<Row>(
      db,
      `SELECT DISTINCT o.id, o.session_id, o.created_at, o.type, o.title, o.files_read, o.files_modified, u.handle AS author
         FROM observation_files f CROSS JOIN observations o ON o.id = f.observation_id JOIN users u ON u.id = o.author_user_id
        WHERE f.team_id = ? AND f.project_id = ? AND f.path IN (SELECT value FROM json_each(?)) AND ${vis.sql}
        ORDER BY o.created_at DESC, o.id DESC LIMIT ?`,
      [viewer.teamId, projectId, JSON.stringify(paths), ...vis.params, limit],
    ),
  );
  return rows.map((r) => ({
    id: r.id,
    sessionId: r.session_id,
    createdAt: r.created_at,
    type: r.type,
    title: r.title,
    filesRead: jsonList(r.files_read),
    filesModified: jsonList(r.files_modified),
    author: r.author,
  }));
}

interface FullRow {
  id: number;
  project: string;
  session: string;
  prompt_number: number;
  type: string;
  title: string | null;
  subtitle: string | null;
  facts: string;
  narrative: string | null;
  concepts: string;
  files_read: string;
  files_modified: string;
  created_at: number;
  author: string;
  device: string | null;
  source: string;
  agent_type: string | null;
  discovery_tokens: number;
}

const toRecord = (r: FullRow): ObservationRecord => ({
  id: r.id,
  project: r.project,
  session: r.session,
  promptNumber: r.prompt_number,
  type: r.type,
  title: r.title,
  subtitle: r.subtitle,
  facts: jsonList(r.facts),
  narrative: r.narrative,
  concepts: jsonList(r.concepts),
  filesRead: jsonList(r.files_read),
  filesModified: jsonList(r.files_modified),
  createdAt: new Date(r.created_at).toISOString(),
  author: r.author,
  device: r.device,
  source: r.source,
  agentType: r.agent_type,
  discoveryTokens: r.discovery_tokens,
  tokens: readTokens(r),
});

/** Full records for `wanted` ids the viewer may read, in the order asked; others are silently absent. */
export async function observationsByIds(db: D1Database, viewer: Viewer, wanted: number[]): Promise<ObservationRecord[]> {
  if (!wanted.length) return [];
  const vis = visibleObservations(viewer, 'o');
  const rows = await all<FullRow>(
    db,
    `SELECT o.id, p.key AS project, s.session_key AS session, o.prompt_number, o.type, o.title, o.subtitle, o.facts, o.narrative,
            o.concepts, o.files_read, o.files_modified, o.created_at, u.handle AS author, d.name AS device, o.source, o.agent_type,
            o.discovery_tokens
       FROM observations o JOIN projects p ON p.id = o.project_id JOIN sessions s ON s.id = o.session_id
       JOIN users u ON u.id = o.author_user_id LEFT JOIN devices d ON d.id = o.device_id
      WHERE o.id IN (SELECT value FROM json_each(?)) AND ${vis.sql}`,
    [JSON.stringify(wanted), ...vis.params],
  );
  const byId = new Map(rows.map((r) => [r.id, toRecord(r)]));
  return wanted.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
}

/** Projects the viewer may see, with the number of observations they may read and the newest one's time. */
export async function listProjects(db: D1Database, viewer: Viewer): Promise<ProjectSummary[]> {
  const rows = await projectsWithActivity(db, viewer);
  return rows.map((r) => ({ key: r.key, visibility: r.visibility, observations: r.observations, last_activity: r.last === null ? null : new Date(r.last).toISOString() }));
}
