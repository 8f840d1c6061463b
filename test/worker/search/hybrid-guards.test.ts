// What keeps hybrid search at least as good as keyword search: exact hits hold the top against any vector
// list, the similarity floor, the fallback when vectors fail or lag; and queries as people type them.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../../../src/auth/types';
import type { CairnEnv } from '../../../src/env';
import { searchObservations } from '../../../src/search/search';
import type { VectorAdapters, VectorMatch } from '../../../src/vectors/types';
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

/** Adapters whose index answers `matches` for every query (the embedder is never judged here). */
function answering(matches: () => VectorMatch[] | Promise<VectorMatch[]>, minScore = 0): VectorAdapters {
  return {
    index: { name: 'scripted', upsert: async () => {}, deleteByIds: async () => {}, query: async () => matches() },
    embedder: { name: 'scripted-embedder', dimensions: 2, minScore, embed: async (t) => t.map(() => [1, 0]) },
  };
}

/** Loud, confident and wrong: every given id at similarity 0.99 and falling, in the order given. */
const loud = (ids: number[]) => answering(() => ids.map((id, i) => ({ id, score: 0.99 - i * 0.001 })));

const ids = (res: { results: { id: number }[] }) => res.results.map((r) => r.id);

describe('fusion against a noisy vector list', () => {
  it('keeps an exact keyword hit first even at the highest vector weight the config accepts', async () => {
    const w = await seedWorld();
    const exact = await w.add({ title: 'Kraken lock timeout in the queue worker' });
    const noise: number[] = [];
    for (let i = 0; i < 30; i++) noise.push(await w.add({ title: `Unrelated sidebar note ${i}` }));
    for (let i = 0; i < 8; i++)
      noise.push(await w.add({ title: `Queue worker note ${i}`, narrative: 'kraken mentioned in passing' }));
    const atFullWeight = { ...env, CAIRN_VECTOR_WEIGHT: '1' } as CairnEnv;
    const res = await searchObservations(
      atFullWeight,
      authOf(w),
      { q: 'kraken lock timeout', project: [w.key] },
      { vectors: loud(noise) },
    );
    expect(res.mode).toBe('hybrid');
    expect(ids(res)[0]).toBe(exact);
  });

  it('keeps the rows that touched a file the query names at the top whatever the vectors say', async () => {
    const w = await seedWorld();
    const touched = await w.add({ title: 'Counter resets every hour', filesModified: ['src/teams/rate-limit.ts'] });
    const noise: number[] = [];
    for (let i = 0; i < 20; i++)
      noise.push(await w.add({ title: `Rate limit musing ${i}`, narrative: 'limits and rates in general' }));
    const res = await searchObservations(
      env,
      authOf(w),
      { q: 'rate-limit.ts', project: [w.key] },
      { vectors: loud(noise) },
    );
    expect(ids(res).slice(0, 3)).toContain(touched);
  });
});

describe('the similarity floor', () => {
  it('keeps a neighbour scored exactly at the floor and drops one just below it', async () => {
    const w = await seedWorld();
    const keyword = await w.add({ title: 'Griffin retry budget' });
    const atFloor = await w.add({ title: 'Backoff doubling between attempts' });
    const below = await w.add({ title: 'Colour of the settings page' });
    const vectors = answering(
      () => [
        { id: atFloor, score: 0.45 },
        { id: below, score: 0.4499 },
      ],
      0.45,
    );
    const got = ids(await searchObservations(env, authOf(w), { q: 'griffin', project: [w.key] }, { vectors }));
    expect(got).toContain(keyword);
    expect(got).toContain(atFloor);
    expect(got).not.toContain(below);
  });

  it('answers exactly like keyword search when every neighbour is under the floor', async () => {
    const w = await seedWorld();
    const rows: number[] = [];
    for (let i = 0; i < 6; i++)
      rows.push(
        await w.add({ title: `Phoenix cache ${i}`, narrative: i % 2 ? 'phoenix cache warmed' : 'phoenix only' }),
      );
    const stranger = await w.add({ title: 'Nothing alike' });
    const vectors = answering(() => [stranger, ...[...rows].reverse()].map((id) => ({ id, score: 0.2 })), 0.5);
    const q = { q: 'phoenix cache', project: [w.key] };
    const fused = await searchObservations(env, authOf(w), q, { vectors });
    const keywords = await searchObservations(env, authOf(w), { ...q, mode: 'fts' });
    expect(ids(fused)).toEqual(ids(keywords));
    expect(ids(fused)).not.toContain(stranger);
  });
});

describe('when vectors fail or lag', () => {
  it('answers from keywords alone when the embedder itself fails', async () => {
    const w = await seedWorld();
    await w.add({ title: 'Chimera token cache warmed at boot' });
    await w.add({ title: 'Sidebar colours', narrative: 'chimera mentioned once' });
    const vectors = answering(() => []);
    vectors.embedder = {
      ...vectors.embedder,
      embed: async () => {
        throw new Error('AI binding unavailable');
      },
    };
    const q = { q: 'chimera cache', project: [w.key] };
    const res = await searchObservations(env, authOf(w), q, { vectors });
    expect(res.mode).toBe('fts');
    expect(ids(res)).toEqual(ids(await searchObservations(env, authOf(w), { ...q, mode: 'fts' })));
  });

  it('never shows a deleted row the vector index still returns because its delete has not landed yet', async () => {
    const w = await seedWorld();
    const live = await w.add({ title: 'Wyrm notes kept' });
    const gone = await w.add({ title: 'Wyrm notes forgotten' });
    await env.DB.prepare('UPDATE observations SET deleted_at = ? WHERE id = ?').bind(Date.now(), gone).run();
    const res = await searchObservations(
      env,
      authOf(w),
      { q: 'wyrm', project: [w.key] },
      { vectors: loud([gone, live]) },
    );
    expect(res.mode).toBe('hybrid');
    expect(ids(res)).toEqual([live]);
  });
});

describe('queries as people type them', () => {
  it('answers a question with the row its keywords find first', async () => {
    const w = await seedWorld();
    const answer = await w.add({ title: 'Flaky checkout test fixed by awaiting the cart fetch' });
    await w.add({ title: 'Checkout page redesign', narrative: 'The test suite ran green afterwards.' });
    const question = ids(
      await searchObservations(env, authOf(w), { q: 'How did we fix the flaky checkout test?', project: [w.key] }),
    );
    const keywords = ids(await searchObservations(env, authOf(w), { q: 'flaky checkout test', project: [w.key] }));
    expect(question[0]).toBe(answer);
    expect(keywords[0]).toBe(answer);
  });

  it('finds a camelCase identifier, a snake_case name inside a fact, and a file name the text never spells', async () => {
    const w = await seedWorld();
    const camel = await w.add({
      title: 'Login fails without a cookie',
      narrative: 'getUserToken() throws when the cookie is missing.',
    });
    await w.add({ title: 'User token stored in a cookie' });
    const snake = await w.add({ title: 'Orders endpoint returns 500', facts: ['user_id is null for guest checkouts'] });
    await w.add({ title: 'User profile id shown twice' });
    const file = await w.add({ title: 'Release script exits early', filesModified: ['scripts/deploy.sh'] });
    const first = async (q: string) => ids(await searchObservations(env, authOf(w), { q, project: [w.key] }))[0];
    expect(await first('why does getUserToken throw')).toBe(camel);
    expect(await first('user_id null')).toBe(snake);
    expect(await first('Why does deploy.sh fail?')).toBe(file);
  });

  it('finds Chinese and Japanese text from a question written around it', async () => {
    const w = await seedWorld();
    const zh = await w.add({ title: 'Session expiry', narrative: '令牌过期导致登录失败' });
    const ja = await w.add({ title: 'Build cache', narrative: 'ビルドキャッシュが壊れていた' });
    await w.add({ title: 'Unrelated', narrative: '今天天气很好' });
    const first = async (q: string) => ids(await searchObservations(env, authOf(w), { q, project: [w.key] }))[0];
    expect(await first('为什么 令牌 过期?')).toBe(zh);
    expect(await first('なぜ キャッシュ が壊れた?')).toBe(ja);
  });
});
