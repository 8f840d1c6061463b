// Full session summaries and user prompts by id (the `S12` / `P7` results of search), scoped by the shared visibility rules.
import type { AuthContext } from '../auth/types';
import { loadViewer, visiblePrompts, visibleSummaries } from '../db/visibility';
import type { CairnEnv } from '../env';

export interface SummaryRecord {
  id: number;
  createdAt: number;
  project: string;
  author: string;
  request: string;
  investigated: string;
  learned: string;
  completed: string;
  nextSteps: string;
  notes: string | null;
}

export interface PromptRecord {
  id: number;
  createdAt: number;
  project: string;
  author: string;
  promptNumber: number;
  text: string;
}

/** Rows in the order of `ids`, leaving out ids the query did not return (unknown or not visible). */
function inIdOrder<T extends { id: number }>(ids: number[], rows: T[]): T[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** The summaries among `ids` the caller may read, in the order asked. */
export async function summaryRecords(env: CairnEnv, auth: AuthContext, ids: number[]): Promise<SummaryRecord[]> {
  if (!ids.length) return [];
  const vis = visibleSummaries(await loadViewer(env.DB, auth), 's');
  const { results } = await env.DB.prepare(
    `SELECT s.id, s.created_at AS createdAt, p.key AS project, u.handle AS author, s.request, s.investigated, s.learned,
            s.completed, s.next_steps AS nextSteps, s.notes
       FROM summaries s JOIN projects p ON p.id = s.project_id JOIN users u ON u.id = s.author_user_id
      WHERE s.id IN (SELECT value FROM json_each(?)) AND ${vis.sql}`,
  )
    .bind(JSON.stringify(ids), ...vis.params)
    .all<SummaryRecord>();
  return inIdOrder(ids, results);
}

/** The prompts among `ids` the caller may read (`visiblePrompts`), in the order asked. */
export async function promptRecords(env: CairnEnv, auth: AuthContext, ids: number[]): Promise<PromptRecord[]> {
  if (!ids.length) return [];
  const vis = visiblePrompts(await loadViewer(env.DB, auth), 'pm');
  const { results } = await env.DB.prepare(
    `SELECT pm.id, pm.created_at AS createdAt, p.key AS project, u.handle AS author, pm.prompt_number AS promptNumber, pm.text
       FROM prompts pm JOIN projects p ON p.id = pm.project_id JOIN users u ON u.id = pm.author_user_id
      WHERE pm.id IN (SELECT value FROM json_each(?)) AND ${vis.sql}`,
  )
    .bind(JSON.stringify(ids), ...vis.params)
    .all<PromptRecord>();
  return inIdOrder(ids, results);
}
