// Timeline reads in D1: one anchor row, and the rows on either side of a position in timeline order
// (time, then observations before summaries, then id). Every statement goes through the visibility rule.
import { and, asc, desc, eq, gt, gte, lt, lte, or, type SQL } from 'drizzle-orm';
import { db as dbOf, type Db } from '../db/client';
import { observations, projects, summaries, users } from '../db/schema';
import { allIndexedBy, inJsonList, observationTokens } from '../db/sqlite';
import { canReadObservation, canReadSummary, type Viewer } from '../db/visibility';

/** A position on the timeline: [time, rank of the kind, id]. */
export type TimelineKey = [at: number, rank: number, id: number];
export type Side = 'before' | 'after';

export const OBS_RANK = 0;
export const SUM_RANK = 1;

const OBS_FIELDS = {
  id: observations.id,
  at: observations.createdAt,
  type: observations.type,
  title: observations.title,
  project: projects.key,
  author: users.handle,
  tokens: observationTokens(),
  projectId: observations.projectId,
};
const SUM_FIELDS = {
  id: summaries.id,
  at: summaries.createdAt,
  request: summaries.request,
  project: projects.key,
  author: users.handle,
  projectId: summaries.projectId,
};

export type TimelineObservationRow = {
  id: number;
  at: number;
  type: string;
  title: string | null;
  project: string;
  author: string;
  tokens: number;
  projectId: number;
};
export type TimelineSummaryRow = {
  id: number;
  at: number;
  request: string;
  project: string;
  author: string;
  projectId: number;
};

/** Rows of a table with rank `rank` that lie strictly on `side` of `key`; the plain time bound lets SQLite range-scan. */
function beyond(
  t: typeof observations | typeof summaries,
  rank: number,
  side: Side,
  [at, keyRank, id]: TimelineKey,
): SQL {
  const strict = side === 'before' ? lt : gt;
  const bound = side === 'before' ? lte : gte;
  const rankBeyond = side === 'before' ? rank < keyRank : rank > keyRank;
  const sameTime =
    rank === keyRank ? and(eq(t.createdAt, at), strict(t.id, id)) : rankBeyond ? eq(t.createdAt, at) : undefined;
  return and(bound(t.createdAt, at), sameTime ? or(strict(t.createdAt, at), sameTime) : strict(t.createdAt, at))!;
}

const inProjects = (col: typeof observations.projectId | typeof summaries.projectId, projectIds: number[] | null) =>
  projectIds ? inJsonList(col, projectIds) : undefined;

export function timelineObservation(
  d1: D1Database | Db,
  v: Viewer,
  id: number,
  projectIds: number[] | null,
): Promise<TimelineObservationRow | undefined> {
  return dbOf(d1)
    .select(OBS_FIELDS)
    .from(observations)
    .innerJoin(projects, eq(projects.id, observations.projectId))
    .innerJoin(users, eq(users.id, observations.authorUserId))
    .where(and(eq(observations.id, id), canReadObservation(v), inProjects(observations.projectId, projectIds)))
    .get();
}

export function timelineSummary(
  d1: D1Database | Db,
  v: Viewer,
  id: number,
  projectIds: number[] | null,
): Promise<TimelineSummaryRow | undefined> {
  return dbOf(d1)
    .select(SUM_FIELDS)
    .from(summaries)
    .innerJoin(projects, eq(projects.id, summaries.projectId))
    .innerJoin(users, eq(users.id, summaries.authorUserId))
    .where(and(eq(summaries.id, id), canReadSummary(v), inProjects(summaries.projectId, projectIds)))
    .get();
}

/** Up to `limit` observations on `side` of `key`, nearest first; one project (`projectId`) or all visible (null). */
export function observationsBeside(
  d1: D1Database | Db,
  v: Viewer,
  projectId: number | null,
  side: Side,
  key: TimelineKey,
  limit: number,
): Promise<TimelineObservationRow[]> {
  const d = dbOf(d1);
  const dir = side === 'before' ? desc : asc;
  const query = d
    .select(OBS_FIELDS)
    .from(observations)
    .innerJoin(projects, eq(projects.id, observations.projectId))
    .innerJoin(users, eq(users.id, observations.authorUserId))
    .where(
      and(
        canReadObservation(v),
        projectId === null ? undefined : eq(observations.projectId, projectId),
        beyond(observations, OBS_RANK, side, key),
      ),
    )
    .orderBy(dir(observations.createdAt), dir(observations.id))
    .limit(limit);
  if (projectId === null) return query;
  return allIndexedBy<TimelineObservationRow>(d, query, OBS_FIELDS, 'observations', 'idx_obs_project_time');
}

/** Up to `limit` session summaries on `side` of `key`, nearest first. */
export function summariesBeside(
  d1: D1Database | Db,
  v: Viewer,
  projectId: number | null,
  side: Side,
  key: TimelineKey,
  limit: number,
): Promise<TimelineSummaryRow[]> {
  const dir = side === 'before' ? desc : asc;
  return dbOf(d1)
    .select(SUM_FIELDS)
    .from(summaries)
    .innerJoin(projects, eq(projects.id, summaries.projectId))
    .innerJoin(users, eq(users.id, summaries.authorUserId))
    .where(
      and(
        canReadSummary(v),
        projectId === null ? undefined : eq(summaries.projectId, projectId),
        beyond(summaries, SUM_RANK, side, key),
      ),
    )
    .orderBy(dir(summaries.createdAt), dir(summaries.id))
    .limit(limit);
}
