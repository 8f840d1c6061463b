// How much one embedding call may carry: texts, characters a text, estimated tokens a call. Records are grouped into
// chunks that fit one call (index-records.ts), and the Workers AI embedder groups the texts it is given the same
// way, so no call exceeds what the model documents whoever calls it.
import { estimateTokens } from '../lib/tokens';

export interface EmbedLimits {
  /** Texts a call takes at most. */
  texts: number;
  /** Estimated tokens (src/lib/tokens.ts) of a call's texts together, each cut to `chars`. */
  tokens: number;
  /** Characters of a text the embedder keeps (the rest is cut before the call). */
  chars: number;
}

/** What an embedder that states no limits is given: a hundred texts a call. */
export const DEFAULT_EMBED_LIMITS: EmbedLimits = {
  texts: 100,
  tokens: Number.POSITIVE_INFINITY,
  chars: Number.MAX_SAFE_INTEGER,
};

/** The estimated tokens of `text` as the embedder will see it (cut to `limits.chars`); linear in what is kept. */
export const callTokens = (text: string, limits: EmbedLimits): number =>
  estimateTokens(text.length > limits.chars ? text.slice(0, limits.chars) : text);

/**
 * Groups `items` in order so that no group has more than `limits.texts` texts or `limits.tokens` estimated
 * tokens; an item's texts stay together, and an item over either bound on its own makes a group alone.
 */
export function groupWithin<T>(
  items: readonly T[],
  textsOf: (item: T) => readonly string[],
  limits: EmbedLimits,
): T[][] {
  const groups: T[][] = [];
  let current: T[] = [];
  let texts = 0;
  let tokens = 0;
  for (const item of items) {
    const own = textsOf(item);
    const ownTokens = own.reduce((n, t) => n + callTokens(t, limits), 0);
    if (current.length && (texts + own.length > limits.texts || tokens + ownTokens > limits.tokens)) {
      groups.push(current);
      current = [];
      texts = 0;
      tokens = 0;
    }
    current.push(item);
    texts += own.length;
    tokens += ownTokens;
  }
  if (current.length) groups.push(current);
  return groups;
}
