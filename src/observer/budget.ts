// Observer budgets, pure: which UTC day and month `now` falls in, and whether a team's spend has used up its
// daily or monthly allowance (then its turns run on the heuristic observer until the period turns).

export interface Period {
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  /** First day of the month, `YYYY-MM-01`. */
  monthStart: string;
  /** ms epoch of the next UTC midnight and of the first midnight of next month. */
  nextDay: number;
  nextMonth: number;
}

export function periodOf(now: number): Period {
  const d = new Date(now);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const day = d.toISOString().slice(0, 10);
  return {
    day,
    monthStart: `${day.slice(0, 7)}-01`,
    nextDay: Date.UTC(y, m, d.getUTCDate() + 1),
    nextMonth: Date.UTC(y, m + 1, 1),
  };
}

export interface Budgets {
  observer_budget_tokens_per_day?: number;
  observer_budget_tokens_per_month?: number;
}

export interface BudgetState {
  /** Which allowance is used up (the month's wins when both are), or null. */
  exhausted: 'day' | 'month' | null;
  /** When the LLM observer comes back (ms epoch), when exhausted. */
  until: number | null;
  spent: { day: number; month: number };
  budgets: { day: number | null; month: number | null };
}

export const hasBudget = (b: Budgets) =>
  b.observer_budget_tokens_per_day !== undefined || b.observer_budget_tokens_per_month !== undefined;

export function budgetState(b: Budgets, spent: { day: number; month: number }, period: Period): BudgetState {
  const budgets = { day: b.observer_budget_tokens_per_day ?? null, month: b.observer_budget_tokens_per_month ?? null };
  const monthOut = budgets.month !== null && spent.month >= budgets.month;
  const dayOut = budgets.day !== null && spent.day >= budgets.day;
  const exhausted = monthOut ? 'month' : dayOut ? 'day' : null;
  return {
    exhausted,
    until: exhausted === 'month' ? period.nextMonth : exhausted === 'day' ? period.nextDay : null,
    spent,
    budgets,
  };
}

/** One line for people (context index, `cairn status`) saying the observer runs on its heuristic fallback. */
export function budgetNotice(s: BudgetState): string | null {
  if (!s.exhausted || s.until === null) return null;
  const limit = s.exhausted === 'day' ? s.budgets.day : s.budgets.month;
  const until = new Date(s.until).toISOString().replace('T', ' ').slice(0, 16);
  return `Observer budget for this ${s.exhausted} is spent (${s.exhausted === 'day' ? s.spent.day : s.spent.month} of ${limit} tokens): new observations come from the heuristic observer until ${until} UTC.`;
}
