// Retention in D1: dead letters counted onto their session before a SessionDO empties itself, and a team's
// `retention_days` applied to its memory rows (observations with their file rows, summaries, prompts, and the
// local vectors of each). Deleting fires the FTS delete triggers; the caller purges the index segments.
import { and, count, eq, gte, isNotNull, lt } from 'drizzle-orm';
import { insertAudit } from './audit';
import { db } from './client';
import { deleteCorrectionRows, insertEventRows } from './corrections';
import { localVectors, observationFiles, observations, prompts, sessions, summaries } from './schema';
import { byIds, inJsonList, jsonCounts, plus, restoreEventRows, unindexed } from './sqlite';

export async function addDeadLetters(d1: D1Database, teamId: number, sessionKey: string, n: number): Promise<void> {
  if (n <= 0) return;
  await db(d1)
    .update(sessions)
    .set({ deadLetters: plus(sessions.deadLetters, n) })
    .where(and(eq(sessions.teamId, teamId), eq(sessions.sessionKey, sessionKey)));
}

/** A session's Durable Object has emptied its storage: the daily sweep of stranded objects passes it over. */
export async function sessionRetired(d1: D1Database, teamId: number, sessionKey: string): Promise<void> {
  await db(d1)
    .update(sessions)
    .set({ retireAfter: null })
    .where(and(eq(sessions.teamId, teamId), eq(sessions.sessionKey, sessionKey)));
}

/** Rows deleted per statement: a long-kept team's first sweep is spread over several batches. */
export const SWEEP_CHUNK = 500;

/** Ids of a team's records older than `before`, at most `limit` of each kind (for the vector index and the sweep). */
export async function oldRecordIds(
  d1: D1Database,
  teamId: number,
  before: number,
  limit = SWEEP_CHUNK,
): Promise<OldRecords> {
  const d = db(d1);
  const older = <T extends typeof observations | typeof summaries | typeof prompts>(t: T) =>
    d
      .select({ id: t.id })
      .from(t)
      .where(and(eq(t.teamId, teamId), lt(t.createdAt, before)))
      .limit(limit);
  const [o, s, p] = await d.batch([older(observations), older(summaries), older(prompts)]);
  return { observations: o.map((r) => r.id), summaries: s.map((r) => r.id), prompts: p.map((r) => r.id) };
}

export interface OldRecords {
  observations: number[];
  summaries: number[];
  prompts: number[];
}

export interface SweepCounts {
  observations: number;
  summaries: number;
  prompts: number;
  /** Merged sources put back because the record that stood for them went (see sweepRecords). */
  restored: number;
}

/**
 * Deletes one chunk of a team's old memory (the ids oldRecordIds found) with their file rows and local vectors of
 * every part. An expiring observation may stand for near-duplicates consolidation merged into it; those created
 * before `before` are in this sweep themselves, but a newer one merged into an older record (a record that already
 * stands for others stays the survivor) is still within the team's retention: it is put back, merged_into cleared
 * with an `unmerge` event, in the same batch. Deleting it would forget a memory the team keeps; leaving it merged
 * would hide it for good behind a record that no longer exists.
 */
export async function sweepRecords(
  d1: D1Database,
  teamId: number,
  ids: OldRecords,
  before: number,
  at: number,
  mark: { action: string; target: string },
): Promise<SweepCounts> {
  const d = db(d1);
  const present = <T extends typeof observations | typeof summaries | typeof prompts>(t: T, list: number[]) =>
    d
      .select({ n: count() })
      .from(t)
      .where(byIds(t.id, list, eq(t.teamId, teamId)));
  const kept = and(
    eq(observations.teamId, teamId),
    isNotNull(observations.mergedInto),
    inJsonList(observations.mergedInto, ids.observations),
    // Through idx_obs_merged: the team's time index would walk every row older than the cutoff.
    unindexed(gte(observations.createdAt, before)),
  );
  // The job's chunk mark (src/jobs/marks.ts) counts, before the deletes below, what they remove.
  const marked = insertAudit(d, {
    teamId,
    actorUserId: null,
    action: mark.action,
    target: mark.target,
    detailSql: jsonCounts({
      observations: present(observations, ids.observations),
      summaries: present(summaries, ids.summaries),
      prompts: present(prompts, ids.prompts),
      restored: d.select({ n: count() }).from(observations).where(kept),
    }),
    at,
  });
  const vectors = (kind: 'observation' | 'summary' | 'prompt', list: number[]) =>
    d
      .delete(localVectors)
      .where(
        and(eq(localVectors.teamId, teamId), eq(localVectors.kind, kind), inJsonList(localVectors.recordId, list)),
      );
  const [, , , , back, , , , , o, s, p] = await d.batch([
    marked,
    ...deleteCorrectionRows(d, teamId, ids.observations),
    insertEventRows(
      d,
      restoreEventRows({
        teamId,
        survivors: ids.observations,
        since: before,
        reason: 'the record that stood for it passed the retention period',
        at,
      }),
    ),
    d.update(observations).set({ mergedInto: null }).where(kept).returning({ id: observations.id }),
    d
      .delete(observationFiles)
      .where(byIds(observationFiles.observationId, ids.observations, eq(observationFiles.teamId, teamId))),
    vectors('observation', ids.observations),
    vectors('summary', ids.summaries),
    vectors('prompt', ids.prompts),
    d
      .delete(observations)
      .where(byIds(observations.id, ids.observations, eq(observations.teamId, teamId)))
      .returning({ id: observations.id }),
    d
      .delete(summaries)
      .where(byIds(summaries.id, ids.summaries, eq(summaries.teamId, teamId)))
      .returning({ id: summaries.id }),
    d
      .delete(prompts)
      .where(byIds(prompts.id, ids.prompts, eq(prompts.teamId, teamId)))
      .returning({ id: prompts.id }),
  ]);
  return { observations: o.length, summaries: s.length, prompts: p.length, restored: back.length };
}
