// Search queries' vectors, remembered per isolate. Agents repeat their questions (the same recall at every
// session start, the same `search` after a retry), and a query's embedding is the slowest part of a hybrid
// search: locally the sentence model, in production a Workers AI call that is billed. A vector depends only on
// the embedder, where it gets its vectors and the exact text, so a remembered one ranks exactly as a fresh one
// would. Only embedders that name their source (`Embedder.querySource`) are cached: a test's fake is never.
import type { Embedder } from './types';

/** Entries kept: 512 floats each (about 4 KB as a JS array), so at most ~1 MB per isolate. */
export const QUERY_CACHE_SIZE = 256;
/** Longer queries are embedded every time: they are rarely repeated word for word and would cost the most memory. */
export const QUERY_CACHE_MAX_CHARS = 500;

export class QueryVectorCache {
  // A Map iterates in insertion order: the first key is the least recently used once hits are re-inserted.
  // Only resolved vectors are kept, never a promise: a promise belongs to the request that started it, and
  // workerd cancels a request's I/O when the request goes away, so a promise shared with later requests
  // could stay pending for good (and every search of that query would wait on it).
  readonly #entries = new Map<string, number[]>();
  constructor(private readonly capacity = QUERY_CACHE_SIZE) {}

  get size(): number {
    return this.#entries.size;
  }

  /**
   * The vector of `text` by `embedder`: a kept one, or embedded now and kept once it has arrived. Searches
   * that ask for the same new query at once each embed it; a failed or empty answer is not kept.
   */
  async embed(embedder: Embedder, text: string): Promise<number[] | undefined> {
    const source = embedder.querySource;
    if (!source || text.length > QUERY_CACHE_MAX_CHARS) return embedOnce(embedder, text);
    const key = `${sourceId(source.binding)}\u0000${embedder.name}\u0000${source.key}\u0000${text}`;
    const hit = this.#entries.get(key);
    if (hit) {
      this.#entries.delete(key);
      this.#entries.set(key, hit);
      return hit;
    }
    const vector = await embedOnce(embedder, text);
    if (vector) this.#keep(key, vector);
    return vector;
  }

  #keep(key: string, vector: number[]): void {
    this.#entries.delete(key);
    this.#entries.set(key, vector);
    if (this.#entries.size > this.capacity) this.#entries.delete(this.#entries.keys().next().value as string);
  }
}

/** A number per binding object: two fakes (or two test environments) never share entries. */
const sources = new WeakMap<object, number>();
let nextSource = 0;
function sourceId(binding: object): number {
  let id = sources.get(binding);
  if (id === undefined) sources.set(binding, (id = ++nextSource));
  return id;
}

const embedOnce = async (embedder: Embedder, text: string): Promise<number[] | undefined> =>
  embedder.embedQuery ? embedder.embedQuery(text) : (await embedder.embed([text]))[0];

const isolateCache = new QueryVectorCache();

/** A search query's vector through this isolate's cache. */
export function embedQuery(embedder: Embedder, text: string): Promise<number[] | undefined> {
  return isolateCache.embed(embedder, text);
}
