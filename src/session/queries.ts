// Observer turns in D1: whether a turn (by the key stored with its rows) has already been written, and its rows.
import { and, eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { observations, summaries } from '../db/schema';

/** More rows than one turn writes (a turn observes at most 20 events). */
const TURN_ROWS = 200;

/**
 * The rows of a turn already in D1 (a turn's rows are written in one batch, so all or none are), or null when
 * it has none: what a replay of the turn must not store again, and what its after-store work indexes.
 */
export async function storedTurnRows(
  db: D1Database,
  teamId: number,
  turnKey: string,
): Promise<{ observationIds: number[]; summaryId: number | null } | null> {
  const d = drizzle(db);
  const [obs, sum] = await d.batch([
    d
      .select({ id: observations.id })
      .from(observations)
      .where(and(eq(observations.teamId, teamId), eq(observations.turnKey, turnKey)))
      .limit(TURN_ROWS),
    d
      .select({ id: summaries.id })
      .from(summaries)
      .where(and(eq(summaries.teamId, teamId), eq(summaries.turnKey, turnKey)))
      .limit(1),
  ]);
  if (obs.length === 0 && sum.length === 0) return null;
  return { observationIds: obs.map((r) => r.id), summaryId: sum[0]?.id ?? null };
}
