// Weighted fusion of the keyword list with the vector list: each channel counts by its weight, and the first
// keyword hits that match every term keep their places, so vector noise can reorder the tail but never bury an
// exact hit.
import { SEARCH_CONFIG } from './config';

export interface KeywordHit {
  id: number;
  /** Matches every query term (or names a file the query names). */
  exact: boolean;
}

export interface FusionOptions {
  vectorWeight: number;
  keywordWeight?: number;
  k?: number;
  /** How many leading exact keyword hits keep their rank. */
  pinExact?: number;
}

/** Fuses ranked keyword hits with ranked vector ids (best first); returns ids best first with non-increasing scores. */
export function weightedFusion(keyword: readonly KeywordHit[], vector: readonly number[], opts: FusionOptions): { id: number; score: number }[] {
  const k = opts.k ?? SEARCH_CONFIG.rrfK;
  const kw = opts.keywordWeight ?? SEARCH_CONFIG.keywordWeight;
  const vw = Math.max(0, opts.vectorWeight);
  const pin = opts.pinExact ?? SEARCH_CONFIG.pinExact;
  const scores = new Map<number, number>();
  const order = new Map<number, number>();
  const add = (id: number, s: number): void => {
    scores.set(id, (scores.get(id) ?? 0) + s);
    if (!order.has(id)) order.set(id, order.size);
  };
  for (const [r, h] of keyword.entries()) add(h.id, kw / (k + r + 1));
  if (vw > 0) for (const [r, id] of vector.entries()) add(id, vw / (k + r + 1));
  const pinned: number[] = [];
  // The first exact hits wherever they stand: a row lifted by a date the query names may precede them.
  for (const h of keyword) {
    if (pinned.length >= pin) break;
    if (h.exact) pinned.push(h.id);
  }
  const isPinned = new Set(pinned);
  const rest = [...scores.keys()]
    .filter((id) => !isPinned.has(id))
    .sort((a, b) => scores.get(b)! - scores.get(a)! || order.get(a)! - order.get(b)!);
  const out = [...pinned, ...rest].map((id) => ({ id, score: scores.get(id)! }));
  // Pinned rows may have scored below what follows them; lift scores so they never increase down the list.
  for (let i = out.length - 2; i >= 0; i--) out[i]!.score = Math.max(out[i]!.score, out[i + 1]!.score);
  return out;
}
