// The wire shape of `GET /api/admin/usage`, shared by the Worker and the viewer's spend panel: types only, no imports.

export interface TokenJson {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
}

/** One model's calls and tokens over the report's range; cost null when the model has no price. */
export interface ModelUsage extends TokenJson {
  model: string;
  calls: number;
  total_tokens: number;
  estimated_cost_usd: number | null;
}

export interface BudgetJson {
  per_day: number | null;
  per_month: number | null;
  spent_today: number;
  spent_this_month: number;
  exhausted: 'day' | 'month' | null;
  until: number | null;
  notice: string | null;
}

export interface UsageReport {
  from: string;
  /** `read_only_model`: what turns that only read ask instead of `model` (OBSERVER_READONLY_MODEL), or null. */
  observer: { provider: string; model: string | null; read_only_model: string | null };
  budget: BudgetJson | null;
  total_tokens: number;
  estimated_cost_usd: number | null;
  models: ModelUsage[];
  days: (TokenJson & { day: string; model: string; calls: number; estimated_cost_usd: number | null })[];
  sessions: (TokenJson & {
    session_id: string | null;
    model: string;
    calls: number;
    estimated_cost_usd: number | null;
  })[];
}
