// Estimated observer cost: US dollars per million tokens per model. The defaults are list prices as we knew
// them when writing this (check the provider's price page); OBSERVER_PRICES (a JSON Worker variable,
// `{"model-or-prefix": {"input": 1, "output": 5, "cache_read": 0.1, "cache_write": 1.25}}`) adds or
// overrides entries. A model matches its own entry, else the longest entry that prefixes it (dated and
// versioned names share a family price); a model with no entry has no estimate, never a guessed one.
import type { TokenCounts } from '../db/usage';

export interface Price {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
}

export const DEFAULT_PRICES: Record<string, Price> = {
  'claude-haiku': { input: 1, output: 5, cache_read: 0.1, cache_write: 1.25 },
  'claude-sonnet': { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
  'claude-opus': { input: 5, output: 25, cache_read: 0.5, cache_write: 6.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cache_read: 0.075, cache_write: 0.15 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cache_read: 0.1, cache_write: 0.4 },
  '@cf/meta/llama-3.3-70b-instruct-fp8-fast': { input: 0.29, output: 2.25, cache_read: 0.29, cache_write: 0.29 },
};

const isPrice = (v: unknown): v is Price =>
  !!v &&
  typeof v === 'object' &&
  ['input', 'output', 'cache_read', 'cache_write'].every(
    (k) => typeof (v as Record<string, unknown>)[k] === 'number' && (v as Record<string, number>)[k]! >= 0,
  );

/** The price table in force: defaults plus valid entries of OBSERVER_PRICES (bad JSON or entries are ignored). */
export function priceTable(raw: string | undefined): Record<string, Price> {
  const table = { ...DEFAULT_PRICES };
  if (!raw) return table;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      for (const [model, price] of Object.entries(parsed)) if (isPrice(price)) table[model] = price;
    }
  } catch {
    // A typo in the variable must not break the usage page; the defaults stand.
  }
  return table;
}

export function priceFor(table: Record<string, Price>, model: string): Price | null {
  if (table[model]) return table[model];
  let best: string | null = null;
  for (const key of Object.keys(table)) if (model.startsWith(key) && (!best || key.length > best.length)) best = key;
  return best ? table[best]! : null;
}

/** Estimated US dollars for the tokens, or null when the model has no price. */
export function estimateCost(table: Record<string, Price>, model: string, t: TokenCounts): number | null {
  const p = priceFor(table, model);
  if (!p) return null;
  const usd =
    (t.inputTokens * p.input +
      t.outputTokens * p.output +
      t.cacheReadTokens * p.cache_read +
      t.cacheWriteTokens * p.cache_write) /
    1_000_000;
  return Math.round(usd * 1_000_000) / 1_000_000;
}
