// The pure steps of `GET /api/admin/usage`: D1's token counts in wire form, and per-day rows turned into
// per-model totals (the viewer's spend panel shows these).
import type { TokenCounts } from '../db/usage';
import type { ModelUsage, TokenJson } from '#shared/wire/usage';

export const tokenJson = (t: TokenCounts): TokenJson => ({
  input_tokens: t.inputTokens,
  output_tokens: t.outputTokens,
  cache_read_tokens: t.cacheReadTokens,
  cache_write_tokens: t.cacheWriteTokens,
});

const sumTokens = (t: TokenCounts) => t.inputTokens + t.outputTokens + t.cacheReadTokens + t.cacheWriteTokens;
const roundUsd = (usd: number) => Math.round(usd * 1e6) / 1e6;

/**
 * Per-model totals from per-day rows, costliest first (then most tokens). A model's cost is the sum of its
 * days' estimates, or null when it has no price (`cost` gives null for every row of such a model).
 */
export function modelTotals<R extends TokenCounts & { model: string; calls: number }>(
  rows: R[],
  cost: (r: R) => number | null,
): ModelUsage[] {
  const by = new Map<string, ModelUsage>();
  for (const r of rows) {
    const m = by.get(r.model) ?? {
      model: r.model,
      calls: 0,
      input_tokens: 0,
      output_tokens: 0,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      total_tokens: 0,
      estimated_cost_usd: 0,
    };
    m.calls += r.calls;
    m.input_tokens += r.inputTokens;
    m.output_tokens += r.outputTokens;
    m.cache_read_tokens += r.cacheReadTokens;
    m.cache_write_tokens += r.cacheWriteTokens;
    m.total_tokens += sumTokens(r);
    const c = cost(r);
    m.estimated_cost_usd = c === null || m.estimated_cost_usd === null ? null : roundUsd(m.estimated_cost_usd + c);
    by.set(r.model, m);
  }
  return [...by.values()].sort(
    (a, b) =>
      (b.estimated_cost_usd ?? -1) - (a.estimated_cost_usd ?? -1) ||
      b.total_tokens - a.total_tokens ||
      a.model.localeCompare(b.model),
  );
}

/** The whole range's estimate: null when any model in it has no price. */
export function totalCost(models: ModelUsage[]): number | null {
  return models.some((m) => m.estimated_cost_usd === null)
    ? null
    : roundUsd(models.reduce((n, m) => n + (m.estimated_cost_usd ?? 0), 0));
}
