// Observer turns in D1: whether a turn (by the key stored with its rows) has already been written.
import { and, eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { observations, summaries } from './schema';

/** True when any observation or summary of the turn is in D1 (the turn's rows are written in one batch). */
export async function turnStored(db: D1Database, teamId: number, turnKey: string): Promise<boolean> {
  const d = drizzle(db);
  const [obs, sum] = await d.batch([
    d.select({ id: observations.id }).from(observations).where(and(eq(observations.teamId, teamId), eq(observations.turnKey, turnKey))).limit(1),
    d.select({ id: summaries.id }).from(summaries).where(and(eq(summaries.teamId, teamId), eq(summaries.turnKey, turnKey))).limit(1),
  ]);
  return obs.length > 0 || sum.length > 0;
}
