// Near-duplicate control for a result list: a few copies of the same thing may stay near the top, the rest
// wait until after the head, so a top 10 is never ten restatements of one record (repeated test runs, the
// same note remembered again). Pure and bounded: at most `window` items of at most `maxWords` words each.

export interface DiversifyOptions {
  /** Only the first `window` items are reordered; the rest keep their places after them. */
  window: number;
  /** Members of one near-duplicate group allowed in the head, in their original order. */
  maxPerGroup: number;
  /** Word-set Jaccard similarity at or above which two texts count as near-duplicates. */
  minSimilarity: number;
  /** Words of a text compared (its opening); caps the work per pair. */
  maxWords: number;
}

export const DIVERSIFY: DiversifyOptions = { window: 30, maxPerGroup: 3, minSimilarity: 0.8, maxWords: 64 };

/** The distinct lower-cased words of the opening of `text` (letters and digits; a CJK run is one word). */
export function wordSet(text: string, maxWords: number): Set<string> {
  const out = new Set<string>();
  // Bounded before it runs: at most maxWords × 40 characters are scanned.
  for (const m of text.slice(0, maxWords * 40).matchAll(/[\p{L}\p{N}]+/gu)) {
    out.add(m[0].toLowerCase());
    if (out.size >= maxWords) break;
  }
  return out;
}

/** |a ∩ b| / |a ∪ b|; two empty sets are not similar (nothing is known about them). */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let shared = 0;
  for (const w of small) if (large.has(w)) shared++;
  return shared / (a.size + b.size - shared);
}

/**
 * Returns `items` reordered: within the first `window`, each item joins the first earlier group it is a
 * near-duplicate of; once a group has `maxPerGroup` members in the head, its further members move to the end
 * of the head (keeping their order). Items are never dropped, so paging still reaches every one.
 */
export function diversify<T>(
  items: readonly T[],
  textOf: (item: T) => string,
  opts: DiversifyOptions = DIVERSIFY,
): T[] {
  const head = items.slice(0, opts.window);
  const groups: { words: Set<string>; count: number }[] = [];
  const kept: T[] = [];
  const deferred: T[] = [];
  for (const item of head) {
    const words = wordSet(textOf(item), opts.maxWords);
    const group = groups.find((g) => jaccard(g.words, words) >= opts.minSimilarity);
    if (!group) {
      groups.push({ words, count: 1 });
      kept.push(item);
    } else if (group.count < opts.maxPerGroup) {
      group.count++;
      kept.push(item);
    } else deferred.push(item);
  }
  return deferred.length === 0 ? [...items] : [...kept, ...deferred, ...items.slice(opts.window)];
}
