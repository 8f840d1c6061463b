// Corrections and feedback in the ranking (pure): a superseded record goes below every current one (so below
// what superseded it), and a record people found useful moves up a little — at most USEFUL_LIFT places, and
// never past one at least as useful — so feedback reorders neighbours without overriding relevance.
export const USEFUL_LIFT = 2;

export interface RankSignal {
  supersededBy: number | null;
  useful: number;
}

/** `items` best first → the same items reordered; scores are lowered where needed so they never rise down the list. */
export function applyCorrections<T extends { id: number; score: number }>(
  items: readonly T[],
  signals: ReadonlyMap<number, RankSignal>,
): T[] {
  if (signals.size === 0) return [...items];
  const useful = (x: T) => Math.max(0, signals.get(x.id)?.useful ?? 0);
  const current = items.filter((x) => (signals.get(x.id)?.supersededBy ?? null) === null);
  const old = items.filter((x) => (signals.get(x.id)?.supersededBy ?? null) !== null);
  const out = [...current];
  for (let i = 1; i < out.length; i++) {
    const u = useful(out[i]!);
    if (u === 0) continue;
    let j = i;
    for (let step = 0; step < Math.min(u, USEFUL_LIFT) && j > 0 && useful(out[j - 1]!) < u; step++, j--) {
      [out[j - 1], out[j]] = [out[j]!, out[j - 1]!];
    }
  }
  const all = [...out, ...old].map((x) => ({ ...x }));
  for (let i = 1; i < all.length; i++) all[i]!.score = Math.min(all[i]!.score, all[i - 1]!.score);
  return all;
}
