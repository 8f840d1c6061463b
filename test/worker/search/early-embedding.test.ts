// When hybrid search asks for the query's vector (issue 13: the embedding is its slowest part, so it starts before
// any statement of the search is sent), and when a repeated query is answered from the query-vector cache.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../../../src/auth/types';
import type { CairnEnv } from '../../../src/env';
import { searchObservations } from '../../../src/search/search';
import { LocalVectorIndex } from '../../../src/vectors/local-index';
import type { Embedder, VectorAdapters } from '../../../src/vectors/types';
import { seedWorld, type SeedWorld } from '../support/seed';

const authOf = (w: SeedWorld): AuthContext => ({
  tokenId: 0,
  teamId: w.ids.teamId,
  teamSlug: w.id.team,
  userId: w.ids.userId,
  handle: w.id.user,
  role: 'owner',
  deviceId: null,
  deviceName: null,
  scopes: ['read'],
});

/** env with its D1 noting each statement prepared into `log`, and adapters whose embedder notes `embed:<text>` there. */
function watched(log: string[], querySource?: { binding: object; key: string }) {
  const DB = new Proxy(env.DB, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      if (prop !== 'prepare') return value.bind(target);
      return (sql: string) => {
        log.push(sql);
        return value.call(target, sql);
      };
    },
  });
  const embedder: Embedder = {
    name: 'watched-embedder',
    dimensions: 2,
    minScore: 0,
    embed: async (texts) => {
      for (const t of texts) log.push(`embed:${t}`);
      return texts.map(() => [1, 0]);
    },
    ...(querySource ? { querySource } : {}),
  };
  const adapters: VectorAdapters = { index: new LocalVectorIndex(DB as D1Database), embedder };
  return { env: { ...env, DB, CAIRN_VECTOR_WEIGHT: '0.5' } as CairnEnv, adapters };
}

/** Statements that find the team's shard come before anything else; they do not belong to the search itself. */
const searchStatements = (log: string[]) => log.filter((s) => !s.startsWith('embed:') && !/team_shards/.test(s));

describe('the query embedding in hybrid search', () => {
  it('asks the embedder for the query before the search sends its first statement', async () => {
    const w = await seedWorld();
    await w.add({ title: 'Kestrel cache warmed at start' });
    const log: string[] = [];
    const { env: watchedEnv, adapters } = watched(log);
    const res = await searchObservations(watchedEnv, authOf(w), { q: 'kestrel cache' }, { vectors: adapters });
    expect(res.mode).toBe('hybrid');
    const first = searchStatements(log)[0];
    expect(first).toBeDefined();
    expect(log.indexOf('embed:kestrel cache')).toBeGreaterThanOrEqual(0);
    expect(log.indexOf('embed:kestrel cache')).toBeLessThan(log.indexOf(first!));
  });

  it('does not ask the embedder for keyword search, a day-only question, or text with nothing searchable', async () => {
    const w = await seedWorld();
    await w.add({ title: 'Osprey deploy notes' });
    const log: string[] = [];
    const { env: watchedEnv, adapters } = watched(log);
    for (const input of [
      { q: 'osprey deploy', mode: 'fts' as const },
      { q: 'what did we do yesterday?' },
      { q: '?!' },
    ]) {
      await searchObservations(watchedEnv, authOf(w), input, { vectors: adapters });
    }
    expect(log.filter((s) => s.startsWith('embed:'))).toEqual([]);
  });

  it('embeds a query repeated across searches once, with the same results each time', async () => {
    const w = await seedWorld();
    for (let i = 0; i < 4; i++) await w.add({ title: `Heron retry budget ${i}` });
    const log: string[] = [];
    const { env: watchedEnv, adapters } = watched(log, { binding: {}, key: crypto.randomUUID() });
    const q = { q: 'heron retry', project: [w.key] };
    const first = await searchObservations(watchedEnv, authOf(w), q, { vectors: adapters });
    const again = await searchObservations(watchedEnv, authOf(w), q, { vectors: adapters });
    expect(again).toEqual(first);
    expect(log.filter((s) => s.startsWith('embed:'))).toEqual(['embed:heron retry']);
  });
});
