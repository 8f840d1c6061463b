// Reciprocal rank fusion: merges ranked id lists without needing their scores to be comparable.

export const RRF_K = 60;

/** Fuses ranked lists (best first) into one, best first; ties keep the order of the first list that has them. */
export function reciprocalRankFusion<K = number>(
  lists: readonly (readonly K[])[],
  k = RRF_K,
): { id: K; score: number }[] {
  const scores = new Map<K, number>();
  const firstSeen = new Map<K, number>();
  let order = 0;
  for (const list of lists) {
    list.forEach((id, rank) => {
      scores.set(id, (scores.get(id) ?? 0) + 1 / (k + rank + 1));
      if (!firstSeen.has(id)) firstSeen.set(id, order++);
    });
  }
  return [...scores.entries()]
    .map(([id, score]) => ({ id, score }))
    .sort((a, b) => b.score - a.score || firstSeen.get(a.id)! - firstSeen.get(b.id)!);
}
