// Weighted fusion of the keyword list with the vector list: each channel counts by its weight, and the first
// keyword hits that match every term keep their places, so vector noise can reorder the tail but never bury an
// exact hit.
import { SEARCH_CONFIG } from './config';

export interface KeywordHit {
  id: number;
  /** Matches every query term (or names a file the query names). */
  exact: boolean;
  /** Higher is better (negated bm25); only score fusion reads it. */
  score?: number;
}

export interface FusionOptions {
  vectorWeight: number;
  keywordWeight?: number;
  k?: number;
  /** How many leading exact keyword hits keep their rank. */
  pinExact?: number;
}

/**
 * Sums each id's contributions; `ranked()` puts the first `pin` exact keyword hits first (wherever they stand: a
 * row lifted by a date the query names may precede them), then the rest by score, earlier-seen first on ties,
 * with scores lifted so they never increase down the list.
 */
function tally(keyword: readonly KeywordHit[], pin: number) {
  const scores = new Map<number, number>();
  const order = new Map<number, number>();
  const add = (id: number, s: number): void => {
    scores.set(id, (scores.get(id) ?? 0) + s);
    if (!order.has(id)) order.set(id, order.size);
  };
  const ranked = (): { id: number; score: number }[] => {
    const pinned: number[] = [];
    for (const h of keyword) {
      if (pinned.length >= pin) break;
      if (h.exact) pinned.push(h.id);
    }
    const isPinned = new Set(pinned);
    const rest = [...scores.keys()]
      .filter((id) => !isPinned.has(id))
      .sort((a, b) => scores.get(b)! - scores.get(a)! || order.get(a)! - order.get(b)!);
    const out = [...pinned, ...rest].map((id) => ({ id, score: scores.get(id)! }));
    for (let i = out.length - 2; i >= 0; i--) out[i]!.score = Math.max(out[i]!.score, out[i + 1]!.score);
    return out;
  };
  return { add, ranked };
}

/** Fuses ranked keyword hits with ranked vector ids (best first); returns ids best first with non-increasing scores. */
export function weightedFusion(
  keyword: readonly KeywordHit[],
  vector: readonly number[],
  opts: FusionOptions,
): { id: number; score: number }[] {
  const k = opts.k ?? SEARCH_CONFIG.rrfK;
  const kw = opts.keywordWeight ?? SEARCH_CONFIG.keywordWeight;
  const vw = Math.max(0, opts.vectorWeight);
  const pin = opts.pinExact ?? SEARCH_CONFIG.pinExact;
  const { add, ranked } = tally(keyword, pin);
  for (const [r, h] of keyword.entries()) add(h.id, kw / (k + r + 1));
  if (vw > 0) for (const [r, id] of vector.entries()) add(id, vw / (k + r + 1));
  return ranked();
}

export interface ScoreFusionOptions {
  /** The vector channel's share, 0–1; keyword search gets the rest. */
  vectorWeight: number;
  /** The embedder's similarity floor: a neighbour at the floor adds nothing, the best neighbour adds the full share. */
  floor: number;
  pinExact?: number;
}

/**
 * Normalised score fusion: each keyword hit scores by the bm25 of its place in the list on a scale where the best is
 * 1 and the worst 0; each vector neighbour by its similarity on a scale where the floor is 0 and the best neighbour is 1;
 * the two are mixed by `vectorWeight`. Unlike RRF, a neighbour barely above the floor adds almost nothing, so a
 * model that is unsure cannot push keyword hits down. The leading exact keyword hits stay pinned.
 */
export function scoreFusion(
  keyword: readonly KeywordHit[],
  vector: readonly { id: number; score: number }[],
  opts: ScoreFusionOptions,
): { id: number; score: number }[] {
  const vw = Math.min(1, Math.max(0, opts.vectorWeight));
  const pin = opts.pinExact ?? SEARCH_CONFIG.pinExact;
  const { add, ranked } = tally(keyword, pin);
  // The list's order is kept (all-terms hits first, rows lifted by a named day where they were put): the i-th hit
  // gets the i-th best bm25 score of the list, scaled so the best is 1 and the worst 0.
  const bm25 = keyword.flatMap((h) => (h.score === undefined ? [] : [h.score])).sort((a, b) => b - a);
  const hi = bm25[0] ?? 0;
  const lo = bm25.at(-1) ?? 0;
  for (const [i, h] of keyword.entries()) add(h.id, (1 - vw) * (hi > lo ? ((bm25[i] ?? lo) - lo) / (hi - lo) : 1));
  const near = vector.filter((m) => m.score >= opts.floor);
  const best = near.reduce((m, x) => Math.max(m, x.score), opts.floor);
  for (const m of near) add(m.id, vw * (best > opts.floor ? (m.score - opts.floor) / (best - opts.floor) : 1));
  return ranked();
}
