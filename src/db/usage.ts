// Observer spend in D1: one row per team, UTC day, session and model, summed as calls come in.
import { and, desc, eq, gte, lte, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { observerUsage, sessions } from './schema';

export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export interface UsageRecord extends TokenCounts {
  teamId: number;
  /** UTC day, `YYYY-MM-DD`. */
  day: string;
  sessionId: number;
  model: string;
}

/** Adds one observer call to its (team, day, session, model) row. */
export async function recordObserverUsage(d1: D1Database, r: UsageRecord): Promise<void> {
  const u = observerUsage;
  await drizzle(d1)
    .insert(u)
    .values({ teamId: r.teamId, day: r.day, sessionId: r.sessionId, model: r.model, calls: 1, inputTokens: r.inputTokens, outputTokens: r.outputTokens, cacheReadTokens: r.cacheReadTokens, cacheWriteTokens: r.cacheWriteTokens })
    .onConflictDoUpdate({
      target: [u.teamId, u.day, u.sessionId, u.model],
      set: {
        calls: sql`${u.calls} + 1`,
        inputTokens: sql`${u.inputTokens} + excluded.input_tokens`,
        outputTokens: sql`${u.outputTokens} + excluded.output_tokens`,
        cacheReadTokens: sql`${u.cacheReadTokens} + excluded.cache_read_tokens`,
        cacheWriteTokens: sql`${u.cacheWriteTokens} + excluded.cache_write_tokens`,
      },
    });
}

/** Every token a provider reported, the measure observer budgets count in. */
const allTokens = sql<number>`COALESCE(SUM(${observerUsage.inputTokens} + ${observerUsage.outputTokens} + ${observerUsage.cacheReadTokens} + ${observerUsage.cacheWriteTokens}), 0)`;

/** The team's tokens on `day` and from `monthStart` to `day` (UTC day keys). */
export async function teamSpend(d1: D1Database, teamId: number, day: string, monthStart: string): Promise<{ day: number; month: number }> {
  const u = observerUsage;
  const [row] = await drizzle(d1)
    .select({
      day: sql<number>`COALESCE(SUM(CASE WHEN ${u.day} = ${day} THEN ${u.inputTokens} + ${u.outputTokens} + ${u.cacheReadTokens} + ${u.cacheWriteTokens} END), 0)`,
      month: allTokens,
    })
    .from(u)
    .where(and(eq(u.teamId, teamId), gte(u.day, monthStart), lte(u.day, day)));
  return { day: Number(row?.day ?? 0), month: Number(row?.month ?? 0) };
}

export interface UsageRow extends TokenCounts {
  day: string;
  model: string;
  calls: number;
}

const sums = {
  calls: sql<number>`SUM(${observerUsage.calls})`,
  inputTokens: sql<number>`SUM(${observerUsage.inputTokens})`,
  outputTokens: sql<number>`SUM(${observerUsage.outputTokens})`,
  cacheReadTokens: sql<number>`SUM(${observerUsage.cacheReadTokens})`,
  cacheWriteTokens: sql<number>`SUM(${observerUsage.cacheWriteTokens})`,
};

/** The team's spend per day and model from `fromDay` on, newest day first. */
export async function usageByDay(d1: D1Database, teamId: number, fromDay: string): Promise<UsageRow[]> {
  const u = observerUsage;
  return drizzle(d1)
    .select({ day: u.day, model: u.model, ...sums })
    .from(u)
    .where(and(eq(u.teamId, teamId), gte(u.day, fromDay)))
    .groupBy(u.day, u.model)
    .orderBy(desc(u.day), u.model);
}

export interface SessionUsageRow extends TokenCounts {
  sessionKey: string | null;
  model: string;
  calls: number;
}

/** The team's costliest sessions since `fromDay` (by tokens), per model. */
export async function usageBySession(d1: D1Database, teamId: number, fromDay: string, limit: number): Promise<SessionUsageRow[]> {
  const u = observerUsage;
  return drizzle(d1)
    .select({ sessionKey: sessions.sessionKey, model: u.model, ...sums })
    .from(u)
    .leftJoin(sessions, eq(sessions.id, u.sessionId))
    .where(and(eq(u.teamId, teamId), gte(u.day, fromDay)))
    .groupBy(u.sessionId, u.model)
    .orderBy(desc(allTokens))
    .limit(limit);
}
