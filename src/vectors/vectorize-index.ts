// Production vector index on Cloudflare Vectorize: one namespace per team and kind, metadata `project`, `type`, `kind`.
import { allVectorIds, collapseParts, parseVectorId, vectorIdOf } from './keys';
import type { VectorIndex, VectorKind, VectorMatch, VectorQuery, VectorRecord } from './types';

/** Vectorize accepts at most 1000 vectors per upsert from a Worker, and topK ≤ 100 without values. */
const UPSERT_BATCH = 1000;
const MAX_TOP_K = 100;

/**
 * Observations (main texts and facts) stay in `team-<id>`, where every vector written before summaries and prompts
 * were embedded already is; summaries and prompts get a namespace each. A namespace is applied before similarity
 * and needs no metadata index, so a kind's query can neither miss old vectors (a metadata index covers only
 * vectors written after it was created) nor be crowded by another kind's.
 */
export const teamNamespace = (teamId: number, kind: VectorKind = 'observation') =>
  `team-${teamId}${NAMESPACE_TAIL[kind]}`;
const NAMESPACE_TAIL: Record<VectorKind, string> = { observation: '', summary: '-summaries', prompt: '-prompts' };

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
        records.slice(i, i + UPSERT_BATCH).map((r) => {
          const kind = r.kind ?? 'observation';
          const part = r.part ?? 0;
          return {
            id: vectorIdOf(prefixes.get(r.teamId) ?? '', { kind, id: r.id, part }),
            values: r.values,
            namespace: teamNamespace(r.teamId, kind),
            // `kind` and `part` are not filtered on (the namespace is the kind); they say what a vector is when read back.
            metadata: { project: String(r.projectId), type: r.type, kind, ...(part > 0 ? { part } : {}) },
          };
        }),
      );
    }
  }

  /** Every id the records can have (an observation's main text and all its fact slots): Vectorize deletes by id only. */
  async deleteByIds(teamId: number, ids: number[], kind: VectorKind = 'observation'): Promise<void> {
    const prefix = await this.idPrefix(teamId);
    const all = ids.flatMap((id) => allVectorIds(prefix, kind, id));
    for (let i = 0; i < all.length; i += UPSERT_BATCH) await this.binding.deleteByIds(all.slice(i, i + UPSERT_BATCH));
  }

  async query(pending: number[] | Promise<number[]>, q: VectorQuery): Promise<VectorMatch[]> {
    const [vector, prefix] = await Promise.all([pending, this.idPrefix(q.teamId)]);
    if (vector.length === 0) return [];
    const kind = q.kind ?? 'observation';
    const filter: VectorizeVectorMetadataFilter = {};
    if (q.projectIds?.length) filter.project = { $in: q.projectIds.map(String) };
    else if (q.excludeProjectIds?.length) filter.project = { $nin: q.excludeProjectIds.map(String) };
    if (q.types?.length) filter.type = { $in: q.types };
    const res = await this.binding.query(vector, {
      topK: Math.min(MAX_TOP_K, q.topK),
      namespace: teamNamespace(q.teamId, kind),
      returnValues: false,
      returnMetadata: 'none',
      ...(Object.keys(filter).length ? { filter } : {}),
    });
    // Only ids of the team's current database and of the kind asked: a vector written under another shard's prefix
    // is not read as a row here. An observation found by several parts is one match, at its best part's score.
    return collapseParts(
      res.matches.flatMap((m) => {
        const key = parseVectorId(prefix, m.id);
        return key && key.kind === kind ? [{ id: key.id, score: m.score }] : [];
      }),
    );
  }
}

/** The part of the Vectorize binding we use (V1 and V2 bindings both have it; tests spy on it). */
export interface VectorizeIndexBinding {
  upsert(vectors: VectorizeVector[]): Promise<unknown>;
  deleteByIds(ids: string[]): Promise<unknown>;
  query(vector: number[], options?: VectorizeQueryOptions): Promise<VectorizeMatches>;
}
