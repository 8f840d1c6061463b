// Retention in D1: dead letters counted onto their session before a SessionDO empties itself, and a team's
// `retention_days` applied to its memory rows (observations with their file rows and local vectors,
// summaries, prompts). Deleting fires the FTS delete triggers; the caller purges the index segments.
import { and, eq, inArray, lt } from 'drizzle-orm';
import { db } from './client';
import { localVectors, observationFiles, observations, prompts, sessions, summaries } from './schema';
import { inJsonList, plus } from './sqlite';

export async function addDeadLetters(d1: D1Database, teamId: number, sessionKey: string, n: number): Promise<void> {
  if (n <= 0) return;
  await db(d1)
    .update(sessions)
    .set({ deadLetters: plus(sessions.deadLetters, n) })
    .where(and(eq(sessions.teamId, teamId), eq(sessions.sessionKey, sessionKey)));
}

/** Rows deleted per statement: a long-kept team's first sweep is spread over several batches. */
export const SWEEP_CHUNK = 500;

/** Ids of a team's observations older than `before`, at most `limit` (for the vector index and the sweep). */
export async function oldObservationIds(d1: D1Database, teamId: number, before: number, limit = SWEEP_CHUNK): Promise<number[]> {
  const rows = await db(d1)
    .select({ id: observations.id })
    .from(observations)
    .where(and(eq(observations.teamId, teamId), lt(observations.createdAt, before)))
    .limit(limit);
  return rows.map((r) => r.id);
}

export interface SweepCounts {
  observations: number;
  summaries: number;
  prompts: number;
}

/** Deletes one chunk of a team's memory older than `before`; returns what went (0s when nothing is left). */
export async function sweepOlderThan(d1: D1Database, teamId: number, before: number, obsIds: number[]): Promise<SweepCounts> {
  const d = db(d1);
  const oldSummaries = d.select({ id: summaries.id }).from(summaries).where(and(eq(summaries.teamId, teamId), lt(summaries.createdAt, before))).limit(SWEEP_CHUNK);
  const oldPrompts = d.select({ id: prompts.id }).from(prompts).where(and(eq(prompts.teamId, teamId), lt(prompts.createdAt, before))).limit(SWEEP_CHUNK);
  const [, , o, s, p] = await d.batch([
    d.delete(observationFiles).where(and(eq(observationFiles.teamId, teamId), inJsonList(observationFiles.observationId, obsIds))),
    d.delete(localVectors).where(and(eq(localVectors.teamId, teamId), inJsonList(localVectors.observationId, obsIds))),
    d.delete(observations).where(and(eq(observations.teamId, teamId), inJsonList(observations.id, obsIds))).returning({ id: observations.id }),
    d.delete(summaries).where(inArray(summaries.id, oldSummaries)).returning({ id: summaries.id }),
    d.delete(prompts).where(inArray(prompts.id, oldPrompts)).returning({ id: prompts.id }),
  ]);
  return { observations: o.length, summaries: s.length, prompts: p.length };
}
