// Near-duplicate detection for consolidation: word-shingle sets over normalised text and their Jaccard
// similarity, then star clusters around the record that stands for each (its survivor). Pure, linear in the
// text (each text is cut to TEXT_CHARS first) and bounded per group (GROUP_MAX candidates).

/** Characters of a record's text compared (title, subtitle, narrative, facts). */
export const TEXT_CHARS = 4_000;
/** Candidates compared within one group at most (the newest). */
export const GROUP_MAX = 200;
/** Words per shingle. */
const K = 3;
/** Similarity at or above which two records of the same files and concepts are one. */
export const THRESHOLD_WITH_FILES = 0.6;
/** Records that name no file share only their concepts: they must be closer still. */
export const THRESHOLD_NO_FILES = 0.8;

/** Lower case, NFKC, every run of non-letters/digits one space. Linear. */
export function normalize(text: string): string {
  return text
    .slice(0, TEXT_CHARS)
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** FNV-1a, 32 bits: shingles as numbers, so a set costs what its count does. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The K-word shingles of a text (its words alone when it has fewer than K). */
export function shingles(text: string): Set<number> {
  const words = normalize(text).split(' ').filter(Boolean);
  const out = new Set<number>();
  if (words.length < K) {
    if (words.length) out.add(hash(words.join(' ')));
    return out;
  }
  for (let i = 0; i + K <= words.length; i++) out.add(hash(words.slice(i, i + K).join(' ')));
  return out;
}

export function jaccard(a: ReadonlySet<number>, b: ReadonlySet<number>): number {
  if (a.size === 0 && b.size === 0) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let both = 0;
  for (const x of small) if (large.has(x)) both++;
  return both / (a.size + b.size - both);
}

export interface Candidate {
  id: number;
  createdAt: number;
  text: string;
  /** Already stands for merged records: it may keep standing, never be merged into another. */
  hasSources: boolean;
}

export interface Cluster {
  survivor: number;
  sources: number[];
  /** The lowest similarity of a source to the survivor. */
  similarity: number;
}

/**
 * Star clusters of one group (same author, type, files and concepts): each candidate, newest first, joins the
 * cluster whose survivor it is most similar to at or above `threshold`, or starts one. A record that already has
 * sources starts its own cluster and is considered first, so it stays the one that stands. Only clusters with
 * sources are answered. At most GROUP_MAX candidates are read; comparisons are bounded by GROUP_MAX².
 */
export function clusterNearDuplicates(candidates: readonly Candidate[], threshold: number): Cluster[] {
  const ordered = [...candidates]
    .sort((a, b) => Number(b.hasSources) - Number(a.hasSources) || b.createdAt - a.createdAt || b.id - a.id)
    .slice(0, GROUP_MAX);
  const stars: { survivor: Candidate; set: Set<number>; sources: number[]; similarity: number }[] = [];
  for (const c of ordered) {
    const set = shingles(c.text);
    let best: (typeof stars)[number] | null = null;
    let bestScore = 0;
    if (!c.hasSources && set.size > 0) {
      for (const s of stars) {
        const score = jaccard(set, s.set);
        if (score >= threshold && score > bestScore) {
          best = s;
          bestScore = score;
        }
      }
    }
    if (best) {
      best.sources.push(c.id);
      best.similarity = Math.min(best.similarity, bestScore);
    } else {
      stars.push({ survivor: c, set, sources: [], similarity: 1 });
    }
  }
  return stars
    .filter((s) => s.sources.length > 0)
    .map((s) => ({ survivor: s.survivor.id, sources: s.sources, similarity: s.similarity }));
}
