// Observer spend in D1: one row per team, UTC day, session and model, summed as calls come in.
import { and, desc, eq, gte, lte, sum } from 'drizzle-orm';
import { db, type Db } from './client';
import { observerUsage, sessions } from './schema';
import { plusExcluded, totalOf } from './sqlite';

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
  /** Calls the tokens were spent in: one observer call, or a whole row when a team moves (src/db/move.ts). */
  calls?: number;
}

/** Adds one observer call (or `calls` of them) to its (team, day, session, model) row. */
export async function recordObserverUsage(d1: D1Database, r: UsageRecord): Promise<void> {
  const u = observerUsage;
  await db(d1)
    .insert(u)
    .values({
      teamId: r.teamId,
      day: r.day,
      sessionId: r.sessionId,
      model: r.model,
      calls: r.calls ?? 1,
      inputTokens: r.inputTokens,
      outputTokens: r.outputTokens,
      cacheReadTokens: r.cacheReadTokens,
      cacheWriteTokens: r.cacheWriteTokens,
    })
    .onConflictDoUpdate({
      target: [u.teamId, u.day, u.sessionId, u.model],
      set: {
        calls: plusExcluded(u.calls),
        inputTokens: plusExcluded(u.inputTokens),
        outputTokens: plusExcluded(u.outputTokens),
        cacheReadTokens: plusExcluded(u.cacheReadTokens),
        cacheWriteTokens: plusExcluded(u.cacheWriteTokens),
      },
    });
}

/** Sets a (team, day, session, model) row to these counts (a team move copies it: a second copy adds nothing). Batchable. */
export const putObserverUsage = (d: Db, r: UsageRecord & { calls: number }) => {
  const row = {
    teamId: r.teamId,
    day: r.day,
    sessionId: r.sessionId,
    model: r.model,
    calls: r.calls,
    inputTokens: r.inputTokens,
    outputTokens: r.outputTokens,
    cacheReadTokens: r.cacheReadTokens,
    cacheWriteTokens: r.cacheWriteTokens,
  };
  return d
    .insert(observerUsage)
    .values(row)
    .onConflictDoUpdate({
      target: [observerUsage.teamId, observerUsage.day, observerUsage.sessionId, observerUsage.model],
      set: row,
    });
};

/** Every token a provider reported, the measure observer budgets count in. */
const TOKEN_COLUMNS = [
  observerUsage.inputTokens,
  observerUsage.outputTokens,
  observerUsage.cacheReadTokens,
  observerUsage.cacheWriteTokens,
];
const allTokens = totalOf(TOKEN_COLUMNS);

/** The team's tokens on `day` and from `monthStart` to `day` (UTC day keys). */
export async function teamSpend(
  d1: D1Database,
  teamId: number,
  day: string,
  monthStart: string,
): Promise<{ day: number; month: number }> {
  const u = observerUsage;
  const [row] = await db(d1)
    .select({
      day: totalOf(TOKEN_COLUMNS, eq(u.day, day)),
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
  calls: sum(observerUsage.calls).mapWith(Number),
  inputTokens: sum(observerUsage.inputTokens).mapWith(Number),
  outputTokens: sum(observerUsage.outputTokens).mapWith(Number),
  cacheReadTokens: sum(observerUsage.cacheReadTokens).mapWith(Number),
  cacheWriteTokens: sum(observerUsage.cacheWriteTokens).mapWith(Number),
};

/** The team's spend per day and model from `fromDay` on, newest day first. */
export async function usageByDay(d1: D1Database, teamId: number, fromDay: string): Promise<UsageRow[]> {
  const u = observerUsage;
  return db(d1)
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
export async function usageBySession(
  d1: D1Database,
  teamId: number,
  fromDay: string,
  limit: number,
): Promise<SessionUsageRow[]> {
  const u = observerUsage;
  return db(d1)
    .select({ sessionKey: sessions.sessionKey, model: u.model, ...sums })
    .from(u)
    .leftJoin(sessions, eq(sessions.id, u.sessionId))
    .where(and(eq(u.teamId, teamId), gte(u.day, fromDay)))
    .groupBy(u.sessionId, u.model)
    .orderBy(desc(allTokens))
    .limit(limit);
}
