// Consolidation in D1 (src/consolidation/ decides what is a near-duplicate): candidate groups of a project (same
// author, type, files and concepts), their texts, the merge of sources into the record that stands for them
// (merged_into, one `merge` event each, an audit row), the merges to review, and their exact undo.
import { and, asc, count, desc, eq, gt, gte, isNotNull, isNull, min, notInArray, type SQL } from 'drizzle-orm';
import { alias, QueryBuilder, type AnySQLiteColumn } from 'drizzle-orm/sqlite-core';
import { insertAudit } from './audit';
import { db as dbOf, type Db } from './client';
import { insertEventRows, notPendingReview } from './corrections';
import { notProposedForMerge, proposeMerge } from './proposals';
import { runBatch, type BatchItem } from './batch';
import { observationEvents, observations } from './schema';
import { byIds, inJsonList, joinedPrefix, jsonGroupIds, jsonSetKey, mergeEventRows } from './sqlite';
import { canReadObservation, type Viewer } from './visibility';

export interface CandidateGroup {
  /** The group's smallest id: the job's cursor moves past it. */
  first: number;
  ids: number[];
  /** The group names no file (read or modified): it must be closer to merge. */
  noFiles: boolean;
}

/** Observations consolidation may touch: current, not merged, not pending review, not forgotten. */
const mergeable = (teamId: number, projectId: number) =>
  and(
    eq(observations.teamId, teamId),
    eq(observations.projectId, projectId),
    isNull(observations.deletedAt),
    isNull(observations.supersededBy),
    isNull(observations.mergedInto),
    notPendingReview(teamId),
    // A source of a merge waiting for an admin (consolidation: review) is decided there, not merged again.
    notProposedForMerge(teamId),
  );

/**
 * Up to `limit` groups of two or more mergeable observations sharing author, type, file lists and concepts,
 * whose smallest id is past `after`, in that order. The lists are compared as sets (the observer and importers
 * write them in any order, with repeats). One statement (a GROUP BY over the project's rows).
 */
export async function candidateGroups(
  d1: D1Database | Db,
  teamId: number,
  projectId: number,
  after: number,
  limit: number,
): Promise<CandidateGroup[]> {
  const o = observations;
  const filesRead = jsonSetKey(o.filesRead);
  const filesModified = jsonSetKey(o.filesModified);
  const rows = await dbOf(d1)
    .select({ first: min(o.id), ids: jsonGroupIds(o.id), filesRead, filesModified })
    .from(o)
    .where(mergeable(teamId, projectId))
    .groupBy(o.authorUserId, o.type, filesRead, filesModified, jsonSetKey(o.concepts))
    .having(and(gt(count(), 1), gt(min(o.id), after)))
    .orderBy(min(o.id))
    .limit(limit);
  return rows.map((r) => ({
    first: r.first ?? 0,
    ids: JSON.parse(r.ids) as number[],
    noFiles: r.filesRead === '[]' && r.filesModified === '[]',
  }));
}

export interface CandidateText {
  id: number;
  createdAt: number;
  text: string;
  hasSources: boolean;
}

/** The words of `ids` (a bounded prefix each) and which of them already stand for merged records. Two statements. */
export async function candidateTexts(
  d1: D1Database | Db,
  teamId: number,
  ids: number[],
  chars: number,
): Promise<CandidateText[]> {
  const d = dbOf(d1);
  const o = observations;
  const [rows, standing] = await d.batch([
    d
      .select({
        id: o.id,
        createdAt: o.createdAt,
        text: joinedPrefix([o.title, o.subtitle, o.narrative, o.facts], chars),
      })
      .from(o)
      .where(byIds(o.id, ids, eq(o.teamId, teamId))),
    d
      .selectDistinct({ id: o.mergedInto })
      .from(o)
      .where(and(eq(o.teamId, teamId), inJsonList(o.mergedInto, ids))),
  ]);
  const has = new Set(standing.map((r) => r.id));
  return rows.map((r) => ({ ...r, hasSources: has.has(r.id) }));
}

export interface MergeAct {
  teamId: number;
  survivor: number;
  sources: number[];
  similarity: number;
  actorUserId: number | null;
  at: number;
  /** The version's reason when it is not the similarity's (an accepted proposal keeps its own). */
  reason?: string;
}

/**
 * Merges `sources` into `survivor` in one batch (3 statements): each source still mergeable gets merged_into and
 * a `merge` event; one audit row. A source that changed meanwhile (superseded, merged, forgotten) is left alone.
 */
export async function mergeRows(d1: D1Database | Db, m: MergeAct, also: readonly BatchItem[] = []): Promise<void> {
  const d = dbOf(d1);
  const reason = m.reason ?? mergeReason(m.survivor, m.similarity);
  await runBatch(d, [
    d
      .update(observations)
      .set({ mergedInto: m.survivor })
      .where(
        byIds(
          observations.id,
          m.sources,
          and(
            eq(observations.teamId, m.teamId),
            isNull(observations.mergedInto),
            isNull(observations.supersededBy),
            isNull(observations.deletedAt),
          ),
        ),
      ),
    insertEventRows(
      d,
      mergeEventRows({
        teamId: m.teamId,
        ids: m.sources,
        action: 'merge',
        by: m.survivor,
        mergedInto: m.survivor,
        actorUserId: m.actorUserId,
        reason,
        at: m.at,
      }),
    ),
    insertAudit(d, {
      teamId: m.teamId,
      actorUserId: m.actorUserId,
      action: 'observation.merge',
      target: `observation:${m.survivor}`,
      detail: { sources: m.sources.length },
      at: m.at,
    }),
    ...also,
  ]);
}

/** A cluster put in the review queue instead (consolidation: review): one proposal row per source, nothing else changes. */
export async function proposeMergeRows(d1: D1Database | Db, m: MergeAct): Promise<void> {
  const d = dbOf(d1);
  await proposeMerge(d, {
    teamId: m.teamId,
    survivor: m.survivor,
    ids: m.sources,
    reason: mergeReason(m.survivor, m.similarity),
    actorUserId: m.actorUserId,
    at: m.at,
  }).run();
}

/** What a merge's version says (and a merge proposal's reason). */
export const mergeReason = (survivor: number, similarity: number) =>
  `near-duplicate of #${survivor} (similarity ${similarity.toFixed(2)})`;

export interface MergeRow {
  survivor: number;
  title: string | null;
  project: number;
  at: number;
  sources: number[];
}

/** A team's merges still in place (sources merged and not undone), newest first, whose survivor the viewer may read. */
export async function recentMerges(d1: D1Database | Db, viewer: Viewer, limit: number): Promise<MergeRow[]> {
  const d = dbOf(d1);
  const e = observationEvents;
  const src = alias(observations, 'src');
  const kept = alias(observations, 'kept');
  const rows = await d
    .select({
      survivor: e.byObservationId,
      at: e.createdAt,
      sources: jsonGroupIds(e.observationId),
      title: kept.title,
      project: kept.projectId,
    })
    .from(e)
    .innerJoin(src, eq(src.id, e.observationId))
    .innerJoin(kept, eq(kept.id, e.byObservationId))
    .where(
      and(
        eq(e.teamId, viewer.teamId),
        eq(e.action, 'merge'),
        eq(src.mergedInto, e.byObservationId),
        canReadObservation(viewer, kept),
      ),
    )
    .groupBy(e.byObservationId, e.createdAt)
    .orderBy(desc(e.createdAt))
    .limit(limit);
  return rows.map((r) => ({
    survivor: r.survivor ?? 0,
    title: r.title,
    project: r.project,
    at: r.at,
    sources: JSON.parse(r.sources) as number[],
  }));
}

/** Sources merged into `survivor` at or after `since` (still merged). */
export async function sourcesMergedSince(
  d1: D1Database | Db,
  teamId: number,
  survivor: number,
  since: number,
): Promise<number[]> {
  const e = observationEvents;
  const rows = await dbOf(d1)
    .selectDistinct({ id: observations.id })
    .from(e)
    .innerJoin(observations, eq(observations.id, e.observationId))
    .where(
      and(
        eq(e.teamId, teamId),
        eq(e.action, 'merge'),
        eq(e.byObservationId, survivor),
        gte(e.createdAt, since),
        eq(observations.mergedInto, survivor),
      ),
    );
  return rows.map((r) => r.id);
}

/** Every record merged into any of `ids` (a forget of a survivor takes them along). */
export async function sourcesOf(d1: D1Database | Db, teamId: number, ids: number[]): Promise<number[]> {
  if (!ids.length) return [];
  const rows = await dbOf(d1)
    .select({ id: observations.id })
    .from(observations)
    .where(and(eq(observations.teamId, teamId), inJsonList(observations.mergedInto, ids)));
  return rows.map((r) => r.id);
}

/** Puts `sources` back exactly as they were (merged_into cleared), one `unmerge` event each and an audit row. */
export async function unmergeRows(
  d1: D1Database | Db,
  u: { teamId: number; survivor: number; sources: number[]; actorUserId: number; at: number },
): Promise<void> {
  const d = dbOf(d1);
  await d.batch([
    insertEventRows(
      d,
      mergeEventRows({
        teamId: u.teamId,
        ids: u.sources,
        action: 'unmerge',
        by: u.survivor,
        mergedInto: u.survivor,
        actorUserId: u.actorUserId,
        reason: 'merge undone',
        at: u.at,
      }),
    ),
    d
      .update(observations)
      .set({ mergedInto: null })
      .where(
        byIds(
          observations.id,
          u.sources,
          and(eq(observations.teamId, u.teamId), eq(observations.mergedInto, u.survivor)),
        ),
      ),
    insertAudit(d, {
      teamId: u.teamId,
      actorUserId: u.actorUserId,
      action: 'observation.unmerge',
      target: `observation:${u.survivor}`,
      detail: { sources: u.sources.length },
      at: u.at,
    }),
  ]);
}

const qb = new QueryBuilder();

/** Merged sources are out of search and the context index: `id NOT IN (…)` over the partial index idx_obs_merged. */
export function notMerged(teamId: number, id: AnySQLiteColumn = observations.id): SQL {
  return notInArray(
    id,
    qb
      .select({ id: observations.id })
      .from(observations)
      .where(and(eq(observations.teamId, teamId), isNotNull(observations.mergedInto))),
  );
}

/**
 * Projects of a team with observations from `since` on (the daily consolidation's candidates): at most `limit`, in id
 * order after `afterProjectId` (the team's daily job pages through them).
 */
export async function activeProjects(
  d1: D1Database | Db,
  teamId: number,
  since: number,
  limit: number,
  afterProjectId = 0,
): Promise<number[]> {
  const rows = await dbOf(d1)
    .selectDistinct({ id: observations.projectId })
    .from(observations)
    .where(
      and(
        eq(observations.teamId, teamId),
        gte(observations.createdAt, since),
        gt(observations.projectId, afterProjectId),
      ),
    )
    .orderBy(asc(observations.projectId))
    .limit(limit);
  return rows.map((r) => r.id);
}
