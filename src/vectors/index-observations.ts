// Embeds stored observations into the vector index (after a turn is stored, and by the backfill).
import { countUnembedded, markEmbedded, observationsToEmbed, unembeddedIds } from '../db/vectors';
import type { CairnEnv } from '../env';
import { getVectorAdapters } from './adapters';
import type { VectorAdapters } from './types';
import { teamDb } from '../db/shards';

type ObservationDoc = Awaited<ReturnType<typeof observationsToEmbed>>[number];

const jsonList = (raw: string): string[] => {
  try {
    const v: unknown = JSON.parse(raw);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
};

/** The text we embed: what the record is about, densest parts first (models truncate from the end). */
export function embeddingText(o: Pick<ObservationDoc, 'title' | 'subtitle' | 'narrative' | 'facts' | 'concepts' | 'files_read' | 'files_modified'>): string {
  const files = [...new Set([...jsonList(o.files_modified), ...jsonList(o.files_read)])].map((f) => f.split('/').slice(-2).join('/'));
  return [o.title, o.subtitle, ...jsonList(o.facts), o.narrative, jsonList(o.concepts).join(', '), files.join(' ')]
    .filter((s): s is string => !!s && s.trim() !== '')
    .join('\n');
}

export interface IndexOutcome {
  indexed: number;
  removed: number;
  failed: number;
}

const MAX_PER_CALL = 1000;

/**
 * Embeds and upserts the given observations of one team and stamps `embedded_at`. Soft-deleted rows are
 * removed from the index instead. Never throws: a failure is logged and the rows stay unembedded, so the
 * backfill picks them up later (safe inside waitUntil).
 */
export async function indexObservations(
  env: CairnEnv,
  teamId: number,
  ids: number[],
  opts: { adapters?: VectorAdapters | null; now?: number } = {},
): Promise<IndexOutcome> {
  const unique = [...new Set(ids)].filter((id) => Number.isSafeInteger(id)).slice(0, MAX_PER_CALL);
  const outcome: IndexOutcome = { indexed: 0, removed: 0, failed: 0 };
  if (unique.length === 0) return outcome;
  const adapters = opts.adapters === undefined ? getVectorAdapters(env) : opts.adapters;
  if (!adapters) return outcome;
  try {
    const d = await teamDb(env, teamId);
    const results = await observationsToEmbed(d, teamId, unique);
    const live = results.filter((r) => r.deleted_at === null);
    const gone = results.filter((r) => r.deleted_at !== null).map((r) => r.id);
    if (gone.length) {
      await adapters.index.deleteByIds(teamId, gone);
      outcome.removed = gone.length;
    }
    if (live.length === 0) return outcome;
    const vectors = await adapters.embedder.embed(live.map(embeddingText));
    await adapters.index.upsert(live.map((r, i) => ({ id: r.id, teamId, projectId: r.project_id, type: r.type, values: vectors[i]! })));
    await markEmbedded(d, teamId, live.map((r) => r.id), opts.now ?? Date.now());
    outcome.indexed = live.length;
  } catch (err) {
    outcome.failed = unique.length - outcome.removed;
    console.error('vector indexing failed; rows stay unembedded for the backfill', { teamId, count: unique.length, message: (err as Error).message });
  }
  return outcome;
}

/** Re-embeds up to `limit` of the team's rows that have no vector yet; reports how many are still missing. */
export async function backfillVectors(
  env: CairnEnv,
  teamId: number,
  limit: number,
  opts: { adapters?: VectorAdapters | null; now?: number } = {},
): Promise<IndexOutcome & { remaining: number }> {
  const d = await teamDb(env, teamId);
  const ids = await unembeddedIds(d, teamId, Math.min(limit, MAX_PER_CALL));
  const outcome = await indexObservations(env, teamId, ids, opts);
  return { ...outcome, remaining: await countUnembedded(d, teamId) };
}
