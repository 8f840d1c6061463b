// Retrieval metrics over a ranked list of keys: recall@k and reciprocal rank, averaged per query set.

/** @param {string[]} ranked @param {string[]} expected @param {number} k */
export function recallAt(ranked, expected, k) {
  const top = new Set(ranked.slice(0, k));
  return expected.filter((e) => top.has(e)).length / expected.length;
}

/** @param {string[]} ranked @param {string[]} expected */
export function reciprocalRank(ranked, expected) {
  const i = ranked.findIndex((key) => expected.includes(key));
  return i < 0 ? 0 : 1 / (i + 1);
}

/**
 * @param {{expected: string[], ranked: string[]}[]} runs
 * @returns {{queries: number, recall5: number, recall10: number, mrr: number}}
 */
export function summarise(runs) {
  const n = runs.length || 1;
  const sum = (f) => runs.reduce((s, r) => s + f(r), 0) / n;
  return {
    queries: runs.length,
    recall5: sum((r) => recallAt(r.ranked, r.expected, 5)),
    recall10: sum((r) => recallAt(r.ranked, r.expected, 10)),
    mrr: sum((r) => reciprocalRank(r.ranked, r.expected)),
  };
}
