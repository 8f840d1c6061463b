// Picks the vector index and embedder for this environment: local (D1 + offline embedder) or Cloudflare's.
import { configOf } from '../config';
import type { CairnEnv } from '../env';
import { LocalEmbedder } from './local-embedder';
import { LocalVectorIndex } from './local-index';
import { SentenceEmbedder } from './sentence-embedder';
import type { VectorAdapters } from './types';
import { VectorizeVectorIndex } from './vectorize-index';
import { WorkersAiEmbedder } from './workers-ai-embedder';
import { shardDb, shardVectorPrefix, teamDb, vectorIdPrefix } from '../db/shards';
import { counted, meteredFetch } from '../db/meter-bindings';

/**
 * One transport object per isolate, so the query-vector cache (keyed by it and the URL) holds across requests;
 * each call is a subrequest of its invocation (src/db/meter.ts).
 */
const globalFetch = { fetch: (input: string, init: RequestInit) => meteredFetch(input, init) };

/**
 * Local runs (CAIRN_LOCAL=1: wrangler dev, tests) use D1 because the Vectorize and Workers AI bindings only work
 * remotely, and the sentence model beside the local stack when its URL is set (npm start and the benchmarks set
 * it), else the offline hashed embedder (weighted 0: keyword search). Null when neither is available; search then
 * uses FTS alone.
 */
export function getVectorAdapters(env: CairnEnv): VectorAdapters | null {
  const config = configOf(env);
  if (config.local) {
    const url = config.embedderUrl;
    const embedder = url ? new SentenceEmbedder(globalFetch, url) : new LocalEmbedder();
    return { index: new LocalVectorIndex((teamId) => teamDb(env, teamId)), embedder };
  }
  if (env.VECTORS && env.AI) {
    return {
      // Every Vectorize and Workers AI call is a subrequest of its invocation (src/db/meter.ts).
      index: new VectorizeVectorIndex(counted(env.VECTORS, 'vectorize'), (teamId) => vectorIdPrefix(env, teamId)),
      embedder: new WorkersAiEmbedder(counted(env.AI, 'ai')),
    };
  }
  return null;
}

/**
 * The index as it holds the vectors of rows on `shard`, whichever database the team is on now: a team move deletes
 * the old database's vectors after the map names the new one (their ids are the old rows', under its prefix).
 * Writes nothing new; null where there is no index.
 */
export function getVectorAdaptersOn(env: CairnEnv, shard: string): VectorAdapters | null {
  const config = configOf(env);
  if (config.local)
    return { index: new LocalVectorIndex(async () => shardDb(env, shard)), embedder: new LocalEmbedder() };
  if (env.VECTORS && env.AI) {
    return {
      index: new VectorizeVectorIndex(counted(env.VECTORS, 'vectorize'), async () => shardVectorPrefix(shard)),
      embedder: new WorkersAiEmbedder(counted(env.AI, 'ai')),
    };
  }
  return null;
}
