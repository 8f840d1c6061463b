// Observer spend: `GET /api/admin/usage` (tokens and estimated cost per day, model and session, the budget in
// force) and `GET /api/observer/budget` (for any token: is the LLM observer on, or its heuristic fallback).
import { Hono } from 'hono';
import * as z from 'zod';
import { settingsFor } from '../db/team-settings';
import { usageByDay, usageBySession, type TokenCounts } from '../db/usage';
import type { AppEnv } from '../auth/types';
import type { CairnEnv } from '../env';
import { parseWith } from '../lib/validate';
import { budgetNotice, periodOf, type BudgetState } from '../observer/budget';
import { estimateCost, priceTable, type Price } from '../observer/prices';
import { createProvider } from '../observer/providers/index';
import { teamBudget } from '../observer/spend';
import { teamDb } from '../db/shards';
import { modelTotals, tokenJson as tokens, totalCost } from './report';
import type { BudgetJson, UsageReport } from '#shared/wire/usage';

const UsageQuery = z.object({ days: z.coerce.number().int().min(1).max(366).default(30) });

export function observerOf(env: CairnEnv): UsageReport['observer'] {
  const p = createProvider(env);
  return { provider: p.name, model: p.name === 'heuristic' ? null : p.model, read_only_model: p.readOnlyModel ?? null };
}

export const budgetJson = (b: BudgetState | null): BudgetJson | null =>
  b && {
    per_day: b.budgets.day,
    per_month: b.budgets.month,
    spent_today: b.spent.day,
    spent_this_month: b.spent.month,
    exhausted: b.exhausted,
    until: b.until,
    notice: budgetNotice(b),
  };

/** Mounted at /api/admin/usage (admin guard at the mount, src/app.ts). */
export const usageRoutes = new Hono<AppEnv>().get('/', async (c) => {
  const auth = c.get('auth');
  const { days } = parseWith(UsageQuery, c.req.query());
  const now = Date.now();
  const from = periodOf(now - (days - 1) * 86_400_000).day;
  const prices: Record<string, Price> = priceTable(c.env.OBSERVER_PRICES);
  const d = await teamDb(c.env, auth.teamId);
  const [byDay, bySession, budget] = await Promise.all([
    usageByDay(d, auth.teamId, from),
    usageBySession(d, auth.teamId, from, 20),
    teamBudget(d, auth.teamId, now, await settingsFor(d, auth)),
  ]);
  const cost = (r: TokenCounts & { model: string }) => estimateCost(prices, r.model, r);
  const costs = byDay.map(cost);
  const models = modelTotals(byDay, cost);
  const report: UsageReport = {
    from,
    observer: observerOf(c.env),
    budget: budgetJson(budget),
    total_tokens: models.reduce((n, m) => n + m.total_tokens, 0),
    // Null when some model in the range has no price (the table is in src/observer/prices.ts and OBSERVER_PRICES).
    estimated_cost_usd: totalCost(models),
    models,
    days: byDay.map((r, i) => ({
      day: r.day,
      model: r.model,
      calls: r.calls,
      ...tokens(r),
      estimated_cost_usd: costs[i] ?? null,
    })),
    sessions: bySession.map((r) => ({
      session_id: r.sessionKey,
      model: r.model,
      calls: r.calls,
      ...tokens(r),
      estimated_cost_usd: cost(r),
    })),
  };
  return c.json(report);
});

/** Mounted at /api/observer (any device token). */
export const budgetRoutes = new Hono<AppEnv>().get('/budget', async (c) => {
  const auth = c.get('auth');
  const d = await teamDb(c.env, auth.teamId);
  const budget = await teamBudget(d, auth.teamId, Date.now(), await settingsFor(d, auth));
  return c.json({ observer: observerOf(c.env), budget: budgetJson(budget) });
});
