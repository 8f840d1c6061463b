// Corrections in the ranking, pure: superseded records sink below current ones, useful ones rise a bounded amount.
import { describe, expect, it } from 'vitest';
import { applyCorrections, USEFUL_LIFT } from '../../../src/search/corrections-rank';

const list = (...ids: number[]) => ids.map((id, i) => ({ id, score: 10 - i }));
const sig = (entries: [number, { supersededBy?: number | null; useful?: number }][]) =>
  new Map(entries.map(([id, s]) => [id, { supersededBy: s.supersededBy ?? null, useful: s.useful ?? 0 }]));

describe('applyCorrections', () => {
  it('leaves the order alone when no record has corrections or feedback', () => {
    expect(applyCorrections(list(1, 2, 3), new Map()).map((x) => x.id)).toEqual([1, 2, 3]);
  });

  it('puts a superseded record below every current one, keeping the order among each', () => {
    const out = applyCorrections(
      list(1, 2, 3, 4),
      sig([
        [1, { supersededBy: 3 }],
        [2, { supersededBy: 2 }],
      ]),
    );
    expect(out.map((x) => x.id)).toEqual([3, 4, 1, 2]);
    for (let i = 1; i < out.length; i++) expect(out[i]!.score).toBeLessThanOrEqual(out[i - 1]!.score);
  });

  it(`lifts a useful record at most ${USEFUL_LIFT} places however many found it useful`, () => {
    const out = applyCorrections(list(1, 2, 3, 4, 5), sig([[5, { useful: 50 }]]));
    expect(out.map((x) => x.id)).toEqual([1, 2, 5, 3, 4]);
  });

  it('never lifts a useful record past one at least as useful, nor above a current one when superseded', () => {
    expect(
      applyCorrections(
        list(1, 2, 3),
        sig([
          [2, { useful: 1 }],
          [3, { useful: 1 }],
        ]),
      ).map((x) => x.id),
    ).toEqual([2, 3, 1]);
    expect(applyCorrections(list(1, 2), sig([[2, { useful: 9, supersededBy: 1 }]])).map((x) => x.id)).toEqual([1, 2]);
  });
});
