// Field truncation: keep the head and tail of an oversized text so a huge payload never crosses the network.

export const FIELD_BUDGET = 16_000;

/** Head 60% + `<elided N chars/>` + tail 30% of `budget` when `text` is longer than the budget. */
export function truncateMiddle(text: string, budget = FIELD_BUDGET): string {
  if (text.length <= budget) return text;
  const head = Math.floor(budget * 0.6);
  const tail = Math.floor(budget * 0.3);
  const elided = text.length - head - tail;
  return `${text.slice(0, head)}<elided ${elided} chars/>${text.slice(text.length - tail)}`;
}

/**
 * Truncates every string inside a JSON value, then, if the whole value is still far over budget (many
 * fields, long arrays), sends its serialised form truncated as one string: the server cuts each field to
 * the same budget anyway, so anything beyond a few budgets would only cost bandwidth.
 */
export function truncateValue(value: unknown, budget = FIELD_BUDGET): unknown {
  const leafCut = mapStrings(value, (s) => truncateMiddle(s, budget));
  if (typeof leafCut === 'string') return leafCut;
  const serialised = JSON.stringify(leafCut) ?? '';
  return serialised.length > budget * 3 ? truncateMiddle(serialised, budget) : leafCut;
}

/** Applies `fn` to every string (values, not keys) of a JSON-like value. */
export function mapStrings(value: unknown, fn: (s: string) => string, depth = 0): unknown {
  if (typeof value === 'string') return fn(value);
  if (depth > 64 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, fn, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = mapStrings(v, fn, depth + 1);
  return out;
}
