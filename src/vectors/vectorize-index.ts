// Production vector index on Cloudflare Vectorize: one namespace per team, metadata `project` and `type`.
import type { VectorIndex, VectorMatch, VectorQuery, VectorRecord } from './types';

/** Vectorize accepts at most 1000 vectors per upsert from a Worker, and topK ≤ 100 without values. */
const UPSERT_BATCH = 1000;
const MAX_TOP_K = 100;

export const teamNamespace = (teamId: number) => `team-${teamId}`;

/**
 * Mutations are asynchronous in Vectorize (visible after a few seconds). Search never waits for them:
 * hybrid fusion always includes the FTS list, so a fresh observation is found by its words meanwhile.
 */
export class VectorizeVectorIndex implements VectorIndex {
  readonly name = 'vectorize';
  constructor(private readonly binding: VectorizeIndexBinding) {}

  async upsert(records: VectorRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += UPSERT_BATCH) {
      await this.binding.upsert(
        records.slice(i, i + UPSERT_BATCH).map((r) => ({
          id: String(r.id),
          values: r.values,
          namespace: teamNamespace(r.teamId),
          metadata: { project: String(r.projectId), type: r.type },
        })),
      );
    }
  }

  async deleteByIds(_teamId: number, ids: number[]): Promise<void> {
    for (let i = 0; i < ids.length; i += UPSERT_BATCH) await this.binding.deleteByIds(ids.slice(i, i + UPSERT_BATCH).map(String));
  }

  async query(vector: number[], q: VectorQuery): Promise<VectorMatch[]> {
    const filter: VectorizeVectorMetadataFilter = {};
    if (q.projectIds?.length) filter.project = { $in: q.projectIds.map(String) };
    else if (q.excludeProjectIds?.length) filter.project = { $nin: q.excludeProjectIds.map(String) };
    if (q.types?.length) filter.type = { $in: q.types };
    const res = await this.binding.query(vector, {
      topK: Math.min(MAX_TOP_K, q.topK),
      namespace: teamNamespace(q.teamId),
      returnValues: false,
      returnMetadata: 'none',
      ...(Object.keys(filter).length ? { filter } : {}),
    });
    return res.matches.flatMap((m) => {
      const id = Number(m.id);
      return Number.isSafeInteger(id) ? [{ id, score: m.score }] : [];
    });
  }
}

/** The part of the Vectorize binding we use (V1 and V2 bindings both have it; tests spy on it). */
export interface VectorizeIndexBinding {
  upsert(vectors: VectorizeVector[]): Promise<unknown>;
  deleteByIds(ids: string[]): Promise<unknown>;
  query(vector: number[], options?: VectorizeQueryOptions): Promise<VectorizeMatches>;
}
