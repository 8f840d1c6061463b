// Production vector index on Cloudflare Vectorize: one namespace per team, metadata `project` and `type`.
import type { VectorIndex, VectorMatch, VectorQuery, VectorRecord } from './types';

/** Vectorize accepts at most 1000 vectors per upsert from a Worker, and topK ≤ 100 without values. */
const UPSERT_BATCH = 1000;
const MAX_TOP_K = 100;

export const teamNamespace = (teamId: number) => `team-${teamId}`;

/**
 * What a team's vector ids start with. Row ids are per D1 database, and one index serves every shard, so a team
 * on a shard other than `DB` gets its shard's name in front (`DB_1:17`); a team on `DB` keeps the plain row id,
 * as before sharding (src/db/shards.ts `vectorIdPrefix`).
 */
export type VectorIdPrefix = (teamId: number) => Promise<string>;
const plainIds: VectorIdPrefix = async () => '';

/**
 * Mutations are asynchronous in Vectorize (visible after a few seconds). Search never waits for them:
 * hybrid fusion always includes the FTS list, so a fresh observation is found by its words meanwhile.
 */
export class VectorizeVectorIndex implements VectorIndex {
  readonly name = 'vectorize';
  constructor(
    private readonly binding: VectorizeIndexBinding,
    private readonly idPrefix: VectorIdPrefix = plainIds,
  ) {}

  async upsert(records: VectorRecord[]): Promise<void> {
    const prefixes = new Map<number, string>();
    for (const t of new Set(records.map((r) => r.teamId))) prefixes.set(t, await this.idPrefix(t));
    for (let i = 0; i < records.length; i += UPSERT_BATCH) {
      await this.binding.upsert(
        records.slice(i, i + UPSERT_BATCH).map((r) => ({
          id: `${prefixes.get(r.teamId) ?? ''}${r.id}`,
          values: r.values,
          namespace: teamNamespace(r.teamId),
          metadata: { project: String(r.projectId), type: r.type },
        })),
      );
    }
  }

  async deleteByIds(teamId: number, ids: number[]): Promise<void> {
    const prefix = await this.idPrefix(teamId);
    for (let i = 0; i < ids.length; i += UPSERT_BATCH) await this.binding.deleteByIds(ids.slice(i, i + UPSERT_BATCH).map((id) => `${prefix}${id}`));
  }

  async query(pending: number[] | Promise<number[]>, q: VectorQuery): Promise<VectorMatch[]> {
    const [vector, prefix] = await Promise.all([pending, this.idPrefix(q.teamId)]);
    if (vector.length === 0) return [];
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
    // Only ids of the team's current database: a vector written under another shard's prefix is not read as a row here.
    return res.matches.flatMap((m) => {
      const digits = m.id.startsWith(prefix) ? m.id.slice(prefix.length) : '';
      const id = /^\d{1,15}$/.test(digits) ? Number(digits) : Number.NaN;
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
