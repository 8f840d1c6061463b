// Picks the vector index and embedder for this environment: local (D1 + offline embedder) or Cloudflare's.
import type { CairnEnv } from '../env';
import type { VectorAdapters } from './types';

/** Null when no vector backend is available; search then answers from FTS alone. */
export function getVectorAdapters(_env: CairnEnv): VectorAdapters | null {
  return null;
}
