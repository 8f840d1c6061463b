// Weighted fusion of keyword and vector lists, and the configured channel weights.
import { describe, expect, it } from 'vitest';
import { fusionMethodFor, SEARCH_CONFIG, vectorWeightFor } from '../../../src/search/config';
import { scoreFusion, weightedFusion } from '../../../src/search/fusion';

const hits = (ids: number[], exactCount: number) => ids.map((id, i) => ({ id, exact: i < exactCount }));

describe('weightedFusion', () => {
  it('keeps the first three exact keyword hits on top even when a noisy vector list ranks them last', () => {
    const keyword = hits([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 3);
    // Noise: the keyword tail first, then unrelated rows, and the exact hits at the very end.
    const noisy = [10, 9, 8, 7, 6, 5, 4, 100, 101, 102, 103, 3, 2, 1];
    for (const vectorWeight of [0.5, 1, 5]) {
      const top3 = weightedFusion(keyword, noisy, { vectorWeight })
        .slice(0, 3)
        .map((x) => x.id);
      expect(top3).toEqual([1, 2, 3]);
    }
  });

  it('pins the first exact keyword hits even when a row lifted by a named day stands before them', () => {
    const keyword = [
      { id: 9, exact: false },
      { id: 1, exact: true },
      { id: 2, exact: true },
      { id: 3, exact: false },
    ];
    const top2 = weightedFusion(keyword, [3, 50, 51, 9], { vectorWeight: 1 })
      .slice(0, 2)
      .map((x) => x.id);
    expect(top2).toEqual([1, 2]);
  });

  it('lets vectors reorder partial keyword matches and bring in rows keyword search missed', () => {
    const keyword = hits([1, 2, 3, 4], 1);
    const fused = weightedFusion(keyword, [4, 50], { vectorWeight: 1 }).map((x) => x.id);
    expect(fused[0]).toBe(1);
    expect(fused.indexOf(4)).toBeLessThan(fused.indexOf(2));
    expect(fused).toContain(50);
  });

  it('ignores the vector list entirely at weight 0', () => {
    const keyword = hits([7, 8, 9], 0);
    expect(weightedFusion(keyword, [9, 42], { vectorWeight: 0 }).map((x) => x.id)).toEqual([7, 8, 9]);
  });

  it('weighs a vector-only row below a keyword-only row of the same rank when the vector weight is below 1', () => {
    const fused = weightedFusion(hits([1], 0), [2], { vectorWeight: 0.5 }).map((x) => x.id);
    expect(fused).toEqual([1, 2]);
  });

  it('returns scores that never increase down the list, pinned rows included', () => {
    const fused = weightedFusion(hits([1, 2, 3, 4], 2), [4, 3], { vectorWeight: 1 });
    expect(fused.map((x) => x.id).slice(0, 2)).toEqual([1, 2]);
    for (let i = 1; i < fused.length; i++) expect(fused[i]!.score).toBeLessThanOrEqual(fused[i - 1]!.score);
  });
});

describe('scoreFusion', () => {
  // Keyword hits with bm25-like scores (higher is better), the first `exactCount` matching every term.
  const scored = (ids: number[], exactCount: number) =>
    ids.map((id, i) => ({ id, exact: i < exactCount, score: 10 - i }));
  const near = (pairs: [number, number][]) => pairs.map(([id, score]) => ({ id, score }));

  it('keeps the first three exact keyword hits on top whatever the vector list says', () => {
    const keyword = scored([1, 2, 3, 4, 5, 6], 3);
    const noisy = near([
      [6, 0.95],
      [5, 0.94],
      [100, 0.93],
      [101, 0.92],
      [3, 0.31],
      [2, 0.31],
      [1, 0.3],
    ]);
    for (const vectorWeight of [0.3, 0.7, 1]) {
      expect(
        scoreFusion(keyword, noisy, { vectorWeight, floor: 0.3 })
          .slice(0, 3)
          .map((x) => x.id),
      ).toEqual([1, 2, 3]);
    }
  });

  it('lets a neighbour far above the floor pass weak keyword hits, and one at the floor add nothing', () => {
    const keyword = scored([1, 2, 3, 4], 0);
    const fused = scoreFusion(
      keyword,
      near([
        [50, 0.8],
        [4, 0.3],
      ]),
      { vectorWeight: 0.3, floor: 0.3 },
    ).map((x) => x.id);
    expect(fused.indexOf(50)).toBeLessThan(fused.indexOf(4));
    expect(fused.indexOf(50)).toBeLessThan(fused.indexOf(3));
    // Row 4 sits at the floor: it keeps its keyword place (last), it is not lifted.
    expect(fused.at(-1)).toBe(4);
  });

  it('drops neighbours below the floor and ignores the vector list at weight 0', () => {
    const keyword = scored([7, 8, 9], 0);
    expect(scoreFusion(keyword, near([[42, 0.29]]), { vectorWeight: 0.5, floor: 0.3 }).map((x) => x.id)).toEqual([
      7, 8, 9,
    ]);
    expect(
      scoreFusion(
        keyword,
        near([
          [9, 0.9],
          [42, 0.9],
        ]),
        { vectorWeight: 0, floor: 0.3 },
      )
        .map((x) => x.id)
        .slice(0, 3),
    ).toEqual([7, 8, 9]);
  });

  it('returns scores that never increase down the list, pinned rows included', () => {
    const fused = scoreFusion(
      scored([1, 2, 3, 4], 2),
      near([
        [4, 0.9],
        [3, 0.8],
      ]),
      { vectorWeight: 0.9, floor: 0.3 },
    );
    expect(fused.map((x) => x.id).slice(0, 2)).toEqual([1, 2]);
    for (let i = 1; i < fused.length; i++) expect(fused[i]!.score).toBeLessThanOrEqual(fused[i - 1]!.score);
  });
});

describe('vector weights', () => {
  it('fuses the local sentence model by score, weighted below keyword search, and the others by rank', () => {
    expect(fusionMethodFor('local-use-lite')).toBe('score');
    expect(vectorWeightFor('local-use-lite')).toBeGreaterThan(0);
    expect(vectorWeightFor('local-use-lite')).toBeLessThan(0.5);
    expect(fusionMethodFor('workers-ai-bge-m3')).toBe('rrf');
  });

  it('gives the offline hashed embedder no say in ranking and bge-m3 at most the weight of keyword search', () => {
    expect(vectorWeightFor('local-hashed-ngrams')).toBe(0);
    expect(vectorWeightFor('workers-ai-bge-m3')).toBeGreaterThan(0);
    expect(vectorWeightFor('workers-ai-bge-m3')).toBeLessThanOrEqual(SEARCH_CONFIG.keywordWeight);
  });

  it('takes a benchmark override only when it is a number from 0 to 1', () => {
    expect(vectorWeightFor('local-hashed-ngrams', '0.25')).toBe(0.25);
    expect(vectorWeightFor('workers-ai-bge-m3', '0')).toBe(0);
    expect(vectorWeightFor('workers-ai-bge-m3', 'lots')).toBe(SEARCH_CONFIG.vectorWeights['workers-ai-bge-m3']);
    expect(vectorWeightFor('workers-ai-bge-m3', '7')).toBe(SEARCH_CONFIG.vectorWeights['workers-ai-bge-m3']);
    expect(vectorWeightFor('some-injected-embedder')).toBe(SEARCH_CONFIG.otherVectorWeight);
  });
});
