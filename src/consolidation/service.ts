// What consolidation merged, for admins: the merges still in place (the record that stands, its sources, when,
// until when it can be undone) and the undo, which puts the sources back exactly as they were. Forgetting a
// record that stands for others forgets them too (src/forget/service.ts asks `sourcesOf`).
import type { AuthContext } from '../auth/types';
import { recentMerges, sourcesMergedSince, unmergeRows } from '../db/consolidation';
import { teamDb } from '../db/shards';
import { canSee } from '../db/forget';
import { loadViewer } from '../db/visibility';
import type { CairnEnv } from '../env';
import { AppError } from '../lib/errors';

/** How long a merge can be undone. */
export const UNDO_MS = 7 * 24 * 3_600_000;
export const MERGES_LIMIT = 50;

export interface MergeItem {
  id: number;
  title: string | null;
  project_id: number;
  sources: number[];
  merged_at: string;
  undo_until: string;
  undoable: boolean;
}

export async function mergesFor(env: CairnEnv, auth: AuthContext, now: number): Promise<{ merges: MergeItem[] }> {
  const d = await teamDb(env, auth.teamId);
  const rows = await recentMerges(d, await loadViewer(d, auth), MERGES_LIMIT);
  return {
    merges: rows.map((r) => ({
      id: r.survivor,
      title: r.title,
      project_id: r.project,
      sources: [...r.sources].sort((a, b) => a - b),
      merged_at: new Date(r.at).toISOString(),
      undo_until: new Date(r.at + UNDO_MS).toISOString(),
      undoable: r.at + UNDO_MS > now,
    })),
  };
}

/** Puts back every source merged into `id` within the undo window. 404 when nothing is merged into it; 409 when too late. */
export async function undoMerge(
  env: CairnEnv,
  auth: AuthContext,
  id: number,
  now: number,
): Promise<{ id: number; restored: number[] }> {
  const d = await teamDb(env, auth.teamId);
  if (!(await canSee(d, await loadViewer(d, auth), 'observation', id)))
    throw new AppError(404, 'not_found', `No observation #${id}.`);
  const recent = await sourcesMergedSince(d, auth.teamId, id, now - UNDO_MS);
  if (!recent.length) {
    const any = await sourcesMergedSince(d, auth.teamId, id, 0);
    if (any.length)
      throw new AppError(
        409,
        'undo_expired',
        `The merge into #${id} is older than 7 days and can no longer be undone; forget or keep it.`,
      );
    throw new AppError(404, 'not_merged', `Nothing is merged into #${id}.`);
  }
  await unmergeRows(d, { teamId: auth.teamId, survivor: id, sources: recent, actorUserId: auth.userId, at: now });
  return { id, restored: recent.sort((a, b) => a - b) };
}
