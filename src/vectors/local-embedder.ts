// Offline embedder for local runs and tests: hashed words, synonyms and character trigrams. Deterministic, no model.
import { bigrams, splitCjkRuns } from '../lib/cjk';
import type { Embedder } from './types';
import { canonicalWord } from './synonyms';

export const LOCAL_DIMENSIONS = 256;

/** FNV-1a, 32-bit. */
function hash(s: string, seed = 0x811c9dc5): number {
  let h = seed;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Splits identifiers so that `getUserToken`, `user_token` and `user-token` share their words. */
function latinWords(text: string): string[] {
  const spaced = text.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2');
  return (spaced.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 1 || /\d/.test(w));
}

const STOP = new Set(
  'the and for with that this from into was were are has have had not but its our you your their then than when what which while where how why who can could should would will just also been being only does did done use used using via per all any each one two out off get got set after before over under about'.split(
    ' ',
  ),
);

/** Weighted features of a text: canonical words (strong), raw words (medium), trigrams and CJK bigrams (weak). */
export function features(text: string): Map<string, number> {
  const out = new Map<string, number>();
  const add = (f: string, w: number) => out.set(f, (out.get(f) ?? 0) + w);
  for (const part of splitCjkRuns(text.normalize('NFKC'))) {
    if (part.cjk) {
      for (const g of bigrams(part.text)) {
        add(`c:${g}`, 1);
        const canon = canonicalWord(g);
        if (canon !== g) add(`w:${canon}`, 1.5);
      }
      continue;
    }
    for (const w of latinWords(part.text)) {
      if (STOP.has(w)) continue;
      const canon = canonicalWord(w);
      add(`w:${canon}`, 1.5);
      if (canon !== w) add(`r:${w}`, 0.5);
      const padded = `^${w}$`;
      if (w.length > 3) for (let i = 0; i + 3 <= padded.length; i++) add(`t:${padded.slice(i, i + 3)}`, 0.25);
    }
  }
  return out;
}

/** Feature-hashed, log-damped, L2-normalised vector. */
export function embedText(text: string, dims = LOCAL_DIMENSIONS): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const [f, w] of features(text)) {
    const h = hash(f);
    const sign = hash(f, 0x9747b28c) & 1 ? 1 : -1;
    v[h % dims]! += sign * (w >= 1 ? 1 + Math.log(w) : w);
  }
  const norm = Math.hypot(...v);
  return norm > 0 ? v.map((x) => x / norm) : v;
}

export class LocalEmbedder implements Embedder {
  readonly name = 'local-hashed-ngrams';
  readonly dimensions = LOCAL_DIMENSIONS;
  readonly minScore = 0.2;

  async embed(texts: string[]): Promise<number[][]> {
    return texts.map((t) => embedText(t, this.dimensions));
  }
}
