// scoreHexRows: the local vector index's cosine over SQLite hex() strings must agree with plain cosine.
import { describe, expect, it } from 'vitest';
import { cosine, scoreHexRows, toBlob } from '../../../src/vectors/local-index';

const hexOf = (values: number[]) =>
  [...new Uint8Array(toBlob(values))].map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join('');

describe('scoreHexRows', () => {
  it('scores each hex-encoded vector like cosine on the decoded floats, in row order', () => {
    const q = [0.5, -1, 2, 0.25];
    const rows = [
      [1, 0, 0, 0],
      [0.5, -1, 2, 0.25],
      [-0.5, 1, -2, -0.25],
      [3, 1, 0.5, -2],
    ];
    const scored = scoreHexRows(
      q,
      rows.map((v, i) => ({ id: 10 + i, hex: hexOf(v) })),
    );
    expect(scored.map((s) => s.id)).toEqual([10, 11, 12, 13]);
    scored.forEach((s, i) => {
      expect(s.score).toBeCloseTo(cosine(q, rows[i]!), 5);
    });
    expect(scored[1]!.score).toBeCloseTo(1, 5);
    expect(scored[2]!.score).toBeCloseTo(-1, 5);
  });

  it('scores a zero vector 0 instead of NaN', () => {
    const scored = scoreHexRows([1, 1], [{ id: 1, hex: hexOf([0, 0]) }]);
    expect(scored).toEqual([{ id: 1, score: 0 }]);
    expect(scoreHexRows([0, 0], [{ id: 2, hex: hexOf([1, 1]) }])).toEqual([{ id: 2, score: 0 }]);
  });
});
