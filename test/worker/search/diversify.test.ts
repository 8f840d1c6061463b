// Near-duplicates in a result list: a few may stay near the top, the rest wait after the other matches.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../../../src/auth/types';
import { DIVERSIFY, diversify, jaccard, wordSet } from '../../../src/search/diversify';
import { searchObservations } from '../../../src/search/search';
import { seedWorld, type SeedWorld } from '../support/seed';

const opts = { ...DIVERSIFY, window: 6, maxPerGroup: 2 };
const same = (s: string) => s;

describe('diversify', () => {
  it('leaves a list without near-duplicates exactly as it was', () => {
    const list = ['redis pool exhausted', 'jwt refresh race', 'webhook signature check', 'csv import drops rows'];
    expect(diversify(list, same, opts)).toEqual(list);
  });

  it('keeps the first members of a near-duplicate group and moves the others after the rest of the head', () => {
    const list = [
      'bump otel group 1',
      'bump otel group 2',
      'fix span names',
      'bump otel group 3',
      'bump otel group 4',
      'trace ids lost',
    ];
    expect(diversify(list, (s) => s.replace(/\d/, ''), opts)).toEqual([
      'bump otel group 1',
      'bump otel group 2',
      'fix span names',
      'trace ids lost',
      'bump otel group 3',
      'bump otel group 4',
    ]);
  });

  it('treats texts that share most of their words as one group, and texts sharing a few as different', () => {
    const a = 'chore deps bump the otel group with 4 updates 1443';
    const b = 'chore deps bump the otel group with 4 updates 1530';
    const c = 'feat otel support metrics instrument for the group';
    expect(jaccard(wordSet(a, 64), wordSet(b, 64))).toBeGreaterThanOrEqual(DIVERSIFY.minSimilarity);
    expect(jaccard(wordSet(a, 64), wordSet(c, 64))).toBeLessThan(DIVERSIFY.minSimilarity);
  });

  it('never reorders past the window, never drops an item, and never groups records without words', () => {
    const list = ['x a', 'x a', 'x a', 'x a', '', '', '', 'y b', 'x a'];
    const out = diversify(list, same, opts);
    expect([...out].sort()).toEqual([...list].sort());
    expect(out).toEqual(['x a', 'x a', '', '', 'x a', 'x a', '', 'y b', 'x a']);
  });

  it('reads only the opening words of a very long text', () => {
    const words = wordSet(`${'word '.repeat(10)}${Array.from({ length: 500 }, (_, i) => `w${i}`).join(' ')}`, 64);
    expect(words.size).toBe(64);
    expect(wordSet('A a Ä 日本語 x_y', 64)).toEqual(new Set(['a', 'ä', '日本語', 'x', 'y']));
  });
});

describe('search results', () => {
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

  it('shows the other matches before the fourth copy of a near-duplicate, and still pages to every copy', async () => {
    const w = await seedWorld();
    const copies: number[] = [];
    for (let i = 0; i < 15; i++)
      copies.push(await w.add({ title: `chore(deps): bump the zeppelin group with 4 updates (#${1400 + i})` }));
    const others: number[] = [];
    for (let i = 0; i < 5; i++)
      others.push(
        await w.add({ title: `Span naming ${i} fixed`, narrative: `The zeppelin exporter dropped attribute ${i}.` }),
      );
    const page1 = await searchObservations(env, authOf(w), { q: 'zeppelin', project: [w.key], limit: 10 });
    const page2 = await searchObservations(env, authOf(w), { q: 'zeppelin', project: [w.key], limit: 10, offset: 10 });
    const ids1 = page1.results.map((r) => r.id);
    const ids2 = page2.results.map((r) => r.id);
    // Copies rank above the others by their titles; three of them keep the top, the other matches follow.
    expect(ids1.slice(0, 3).every((id) => copies.includes(id))).toBe(true);
    expect(new Set(ids1.slice(3, 8))).toEqual(new Set(others));
    expect(ids1.slice(8).every((id) => copies.includes(id))).toBe(true);
    expect(ids2.every((id) => copies.includes(id))).toBe(true);
    expect(new Set([...ids1, ...ids2]).size).toBe(20);
    const scores = page1.results.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });
});
