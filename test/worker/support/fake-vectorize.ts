// A Vectorize index that keeps its vectors in memory, and an env that routes cairn's production vector path
// (Vectorize + Workers AI adapters) to it: what forget, retention and a move leave in the index can then be read.
import { env } from 'cloudflare:workers';
import type { CairnEnv } from '../../../src/env';
import type { VectorizeIndexBinding } from '../../../src/vectors/vectorize-index';
import { FakeWorkersAi } from './fake-workers-ai';

interface Stored {
  id: string;
  namespace: string;
  values: number[];
  metadata: Record<string, unknown>;
}

type Filter = Record<string, { $in?: string[]; $nin?: string[] } | undefined>;

const passes = (m: Record<string, unknown>, filter: Filter | undefined) =>
  Object.entries(filter ?? {}).every(([k, f]) => {
    const v = String(m[k]);
    return (!f?.$in || f.$in.includes(v)) && (!f?.$nin || !f.$nin.includes(v));
  });

const dot = (a: number[], b: number[]) => a.reduce((n, x, i) => n + x * (b[i] ?? 0), 0);

export class FakeVectorize implements VectorizeIndexBinding {
  readonly vectors = new Map<string, Stored>();

  async upsert(vectors: VectorizeVector[]): Promise<unknown> {
    for (const v of vectors) {
      this.vectors.set(v.id, {
        id: v.id,
        namespace: v.namespace ?? '',
        values: Array.from(v.values as ArrayLike<number>),
        metadata: { ...(v.metadata ?? {}) },
      });
    }
    return { mutationId: 'fake' };
  }

  async deleteByIds(ids: string[]): Promise<unknown> {
    for (const id of ids) this.vectors.delete(id);
    return { mutationId: 'fake' };
  }

  async query(vector: number[], options?: VectorizeQueryOptions): Promise<VectorizeMatches> {
    const matches = [...this.vectors.values()]
      .filter(
        (v) => v.namespace === (options?.namespace ?? '') && passes(v.metadata, options?.filter as Filter | undefined),
      )
      .map((v) => ({ id: v.id, score: dot(vector, v.values) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, options?.topK ?? 5);
    return { count: matches.length, matches };
  }

  /** Ids stored in namespaces of `teamId`, sorted. */
  idsOf(teamId: number): string[] {
    return [...this.vectors.values()]
      .filter((v) => v.namespace === `team-${teamId}` || v.namespace.startsWith(`team-${teamId}-`))
      .map((v) => v.id)
      .sort();
  }
}

/** One Workers AI for every test that brings none (the query-vector cache keys on the binding object). */
const sharedAi = new FakeWorkersAi();

/**
 * The test env with the production vector adapters over `index` (CAIRN_LOCAL unset: Vectorize + Workers AI, the
 * latter a fake that refuses what bge-m3 documents it refuses: fake-workers-ai.ts).
 */
export function productionVectorEnv(index: FakeVectorize, ai: FakeWorkersAi = sharedAi): CairnEnv {
  return { ...env, CAIRN_LOCAL: '', VECTORS: index, AI: ai } as unknown as CairnEnv;
}

/**
 * A Vectorize whose `cutAt`-th delete call throws: a job step that dies there, after the D1 batches before it
 * landed, is a step cut off by a restart (the runner saves no cursor for it and runs it again).
 */
export class CuttingVectorize extends FakeVectorize {
  deletes = 0;
  constructor(private readonly cutAt: number) {
    super();
  }

  override async deleteByIds(ids: string[]): Promise<unknown> {
    if (++this.deletes === this.cutAt) throw new Error('cut off mid-step');
    return super.deleteByIds(ids);
  }
}
