// The per-isolate cache of search queries' vectors (src/vectors/query-cache.ts): what it keeps, what it drops,
// and which embedders it never caches.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { QUERY_CACHE_MAX_CHARS, QueryVectorCache } from '../../../src/vectors/query-cache';
import { LocalVectorIndex } from '../../../src/vectors/local-index';
import type { Embedder } from '../../../src/vectors/types';

/** An embedder that counts its calls per text and answers a vector made from the text's length and call number. */
function counting(source: { binding: object; key: string } | undefined, name = 'counting') {
  const calls: string[] = [];
  const embedder: Embedder = {
    name,
    dimensions: 2,
    minScore: 0,
    embed: async (texts) => texts.map((t) => [t.length, calls.push(t)]),
    ...(source ? { querySource: source } : {}),
  };
  return { embedder, calls };
}

const source = () => ({ binding: {}, key: `http://embedder-${crypto.randomUUID()}/embed` });

describe('the query-vector cache', () => {
  it('embeds a repeated query once and answers it with the same vector', async () => {
    const cache = new QueryVectorCache(4);
    const { embedder, calls } = counting(source());
    const first = await cache.embed(embedder, 'where is the rate limiter?');
    const again = await cache.embed(embedder, 'where is the rate limiter?');
    expect(again).toEqual(first);
    expect(calls).toEqual(['where is the rate limiter?']);
  });

  it('treats texts that differ only in case or spacing as different queries', async () => {
    const cache = new QueryVectorCache(4);
    const { embedder, calls } = counting(source());
    for (const q of ['rate limiter', 'Rate limiter', 'rate limiter ']) await cache.embed(embedder, q);
    expect(calls).toHaveLength(3);
  });

  it('keeps the most recently used queries and drops the least recently used one past its capacity', async () => {
    const cache = new QueryVectorCache(2);
    const { embedder, calls } = counting(source());
    await cache.embed(embedder, 'a');
    await cache.embed(embedder, 'b');
    await cache.embed(embedder, 'a'); // now b is the least recently used
    await cache.embed(embedder, 'c'); // drops b
    expect(cache.size).toBe(2);
    await cache.embed(embedder, 'a');
    await cache.embed(embedder, 'c');
    expect(calls).toEqual(['a', 'b', 'c']);
    await cache.embed(embedder, 'b');
    expect(calls).toEqual(['a', 'b', 'c', 'b']);
  });

  it('answers searches that ask for the same query at once with the same vector, and keeps it once', async () => {
    const cache = new QueryVectorCache(4);
    const { embedder, calls } = counting(source());
    const [x, y] = await Promise.all([cache.embed(embedder, 'same'), cache.embed(embedder, 'same')]);
    expect(x?.[0]).toBe(4);
    expect(y?.[0]).toBe(4);
    expect(cache.size).toBe(1);
    const asked = calls.length;
    expect((await cache.embed(embedder, 'same'))?.[0]).toBe(4);
    expect(calls).toHaveLength(asked);
  });

  it('keeps nothing for an embedding still on its way: a search cancelled with its request leaves no entry that never resolves', async () => {
    const cache = new QueryVectorCache(4);
    const src = source();
    // The first request's embedding never settles (workerd cancels the I/O of a request that went away).
    const stalled: Embedder = {
      name: 'model',
      dimensions: 2,
      minScore: 0,
      querySource: src,
      embed: () => new Promise<number[][]>(() => {}),
    };
    void cache.embed(stalled, 'where is the rate limiter?');
    expect(cache.size).toBe(0);
    // The next request asks the same embedder (same binding, name and source) and gets its own answer.
    const calls: string[] = [];
    const working: Embedder = { ...stalled, embed: async (texts) => texts.map((t) => (calls.push(t), [1, 0])) };
    expect(await cache.embed(working, 'where is the rate limiter?')).toEqual([1, 0]);
    expect(calls).toEqual(['where is the rate limiter?']);
    expect(cache.size).toBe(1);
  });

  it('keeps no entry for a query whose embedding came back empty', async () => {
    const cache = new QueryVectorCache(4);
    const empty: Embedder = { name: 'model', dimensions: 2, minScore: 0, querySource: source(), embed: async () => [] };
    expect(await cache.embed(empty, 'q')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('forgets a failed embedding so the next search asks the embedder again', async () => {
    const cache = new QueryVectorCache(4);
    let fail = true;
    const calls: string[] = [];
    const flaky: Embedder = {
      name: 'flaky',
      dimensions: 1,
      minScore: 0,
      querySource: source(),
      embed: async (texts) => {
        calls.push(...texts);
        if (fail) throw new Error('model not ready');
        return texts.map(() => [1]);
      },
    };
    await expect(cache.embed(flaky, 'q')).rejects.toThrow(/not ready/);
    fail = false;
    expect(await cache.embed(flaky, 'q')).toEqual([1]);
    expect(await cache.embed(flaky, 'q')).toEqual([1]);
    expect(calls).toEqual(['q', 'q']);
  });

  it('never caches an embedder that does not name where its vectors come from', async () => {
    const cache = new QueryVectorCache(4);
    const { embedder, calls } = counting(undefined);
    await cache.embed(embedder, 'q');
    await cache.embed(embedder, 'q');
    expect(calls).toEqual(['q', 'q']);
    expect(cache.size).toBe(0);
  });

  it('keeps two bindings apart even when their embedders share a name and a key', async () => {
    const cache = new QueryVectorCache(4);
    const a = counting({ binding: {}, key: 'same-url' }, 'same-name');
    const b = counting({ binding: {}, key: 'same-url' }, 'same-name');
    await cache.embed(a.embedder, 'q');
    await cache.embed(b.embedder, 'q');
    expect(a.calls).toEqual(['q']);
    expect(b.calls).toEqual(['q']);
  });

  it('embeds queries longer than its limit every time instead of keeping them', async () => {
    const cache = new QueryVectorCache(4);
    const { embedder, calls } = counting(source());
    const long = 'x'.repeat(QUERY_CACHE_MAX_CHARS + 1);
    await cache.embed(embedder, long);
    await cache.embed(embedder, long);
    expect(calls).toHaveLength(2);
    expect(cache.size).toBe(0);
  });
});

describe('the local index with a vector still on its way', () => {
  it('reads its candidates from D1 before the query vector arrives, then ranks as with a ready vector', async () => {
    const teamId = 7_400_000 + Math.floor(Math.random() * 100_000);
    const base = 8_600_000 + Math.floor(Math.random() * 100_000) * 4;
    const reads: string[] = [];
    // D1 as the index sees it, noting each statement it prepares.
    const spied = new Proxy(env.DB, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (prop !== 'prepare' || typeof value !== 'function')
          return typeof value === 'function' ? value.bind(target) : value;
        return (sql: string) => {
          reads.push(sql);
          return value.call(target, sql);
        };
      },
    });
    const idx = new LocalVectorIndex(spied as D1Database);
    await idx.upsert([
      { id: base, teamId, projectId: 1, type: 'bugfix', values: [1, 0] },
      { id: base + 1, teamId, projectId: 1, type: 'bugfix', values: [0.6, 0.8] },
      { id: base + 2, teamId, projectId: 1, type: 'bugfix', values: [0, 1] },
    ]);
    reads.length = 0;
    let arrive: (v: number[]) => void = () => {};
    const vector = new Promise<number[]>((resolve) => (arrive = resolve));
    const pending = idx.query(vector, { teamId, topK: 2 });
    for (let i = 0; i < 200 && !reads.some((s) => /local_vectors/.test(s)); i++)
      await new Promise((r) => setTimeout(r, 5));
    expect(reads.some((s) => /local_vectors/.test(s))).toBe(true);
    arrive([0, 1]);
    const ready = await new LocalVectorIndex(env.DB).query([0, 1], { teamId, topK: 2 });
    expect(await pending).toEqual(ready);
    expect(ready.map((m) => m.id)).toEqual([base + 2, base + 1]);
  });
});
