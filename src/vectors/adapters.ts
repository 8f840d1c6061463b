// Picks the vector index and embedder for this environment: local (D1 + offline embedder) or Cloudflare's.
import { configOf } from '../config';
import type { CairnEnv } from '../env';
import { LocalEmbedder } from './local-embedder';
import { LocalVectorIndex } from './local-index';
import type { VectorAdapters } from './types';
import { VectorizeVectorIndex } from './vectorize-index';
import { WorkersAiEmbedder } from './workers-ai-embedder';
import { teamDb, vectorIdPrefix } from '../db/shards';

/**
 * Local runs (CAIRN_LOCAL=1: wrangler dev, tests) use D1 and the offline embedder because the Vectorize and
 * Workers AI bindings only work remotely. Null when neither is available; search then uses FTS alone.
 */
export function getVectorAdapters(env: CairnEnv): VectorAdapters | null {
  if (configOf(env).local) return { index: new LocalVectorIndex((teamId) => teamDb(env, teamId)), embedder: new LocalEmbedder() };
  if (env.VECTORS && env.AI) {
    return {
      index: new VectorizeVectorIndex(env.VECTORS, (teamId) => vectorIdPrefix(env, teamId)),
      embedder: new WorkersAiEmbedder(env.AI),
    };
  }
  return null;
}
