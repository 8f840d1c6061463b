// Full session summaries and user prompts by id (the `S12` / `P7` results of search), scoped by the shared visibility rules.
import type { PromptRecord, SummaryRecord } from '#shared/wire/records';
import type { AuthContext } from '../auth/types';
import { promptsByIds, summariesByIds } from '../db/recall';
import { loadViewer } from '../db/visibility';
import type { CairnEnv } from '../env';
import { teamDb } from '../db/shards';

/** Rows in the order of `ids`, leaving out ids the query did not return (unknown or not visible). */
function inIdOrder<T extends { id: number }>(ids: number[], rows: T[]): T[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** The summaries among `ids` the caller may read, in the order asked. */
export async function summaryRecords(env: CairnEnv, auth: AuthContext, ids: number[]): Promise<SummaryRecord[]> {
  if (!ids.length) return [];
  const d = await teamDb(env, auth.teamId);
  const results = await summariesByIds(d, await loadViewer(d, auth), ids);
  return inIdOrder(ids, results);
}

/** The prompts among `ids` the caller may read (`visiblePrompts`), in the order asked. */
export async function promptRecords(env: CairnEnv, auth: AuthContext, ids: number[]): Promise<PromptRecord[]> {
  if (!ids.length) return [];
  const d = await teamDb(env, auth.teamId);
  const results = await promptsByIds(d, await loadViewer(d, auth), ids);
  return inIdOrder(ids, results);
}
