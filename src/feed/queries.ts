// Viewer read model in D1: feed pages, items by id (the live hub's re-check) and one session with its
// rows. Every row passes the visibility rule; the shapes match the viewer's wire types (src/shared/wire/feed.ts,
// checked where src/feed/ uses them).
import { and, asc, desc, eq, isNull, lt, or, type SQL } from 'drizzle-orm';
import { db as dbOf, type Db } from '../db/client';
import { observations, projects, sessions, summaries, users } from '../db/schema';
import { byIds, inJsonList } from '../db/sqlite';
import { canReadObservation, canReadSummary, canSeeProject, type Viewer } from '../db/visibility';

type Kind = 'observation' | 'summary';

/** Position in the feed: items sort by createdAt desc, then summaries before observations, then id desc. */
export interface FeedCursor {
  createdAt: number;
  kind: Kind;
  id: number;
}

export interface FeedFilter {
  /** null = every project the viewer may see. */
  projectIds: number[] | null;
  type: string | null;
  author: string | null;
  before: FeedCursor | null;
  limit: number;
}

const KIND_RANK: Record<Kind, number> = { summary: 1, observation: 0 };

/** Feed order: newest first; at equal times summaries first; then higher ids first. */
export function compareItems(a: FeedCursor, b: FeedCursor): number {
  return b.createdAt - a.createdAt || KIND_RANK[b.kind] - KIND_RANK[a.kind] || b.id - a.id;
}

const OBS_FIELDS = {
  id: observations.id,
  sessionId: observations.sessionId,
  projectId: observations.projectId,
  projectKey: projects.key,
  type: observations.type,
  title: observations.title,
  subtitle: observations.subtitle,
  author: users.handle,
  promptNumber: observations.promptNumber,
  createdAt: observations.createdAt,
  source: observations.source,
};
const SUM_FIELDS = {
  id: summaries.id,
  sessionId: summaries.sessionId,
  projectId: summaries.projectId,
  projectKey: projects.key,
  author: users.handle,
  promptNumber: summaries.promptNumber,
  createdAt: summaries.createdAt,
  request: summaries.request,
  investigated: summaries.investigated,
  learned: summaries.learned,
  completed: summaries.completed,
  nextSteps: summaries.nextSteps,
  notes: summaries.notes,
};

type Order = 'newest' | 'oldest';

// `ids`, when given, names the rows: they are looked up by id (byIds), the rule and `where` checked on each.

async function selectObservations(
  d: Db,
  v: Viewer,
  where: (SQL | undefined)[],
  order: Order | null,
  limit?: number,
  ids?: number[],
) {
  const dir = order === 'oldest' ? asc : desc;
  const q = d
    .select(OBS_FIELDS)
    .from(observations)
    .innerJoin(projects, eq(projects.id, observations.projectId))
    .innerJoin(users, eq(users.id, observations.authorUserId))
    .where(ids ? byIds(observations.id, ids, canReadObservation(v), ...where) : and(canReadObservation(v), ...where))
    .orderBy(...(order ? [dir(observations.createdAt), dir(observations.id)] : []));
  const rows = limit === undefined ? await q : await q.limit(limit);
  return rows.map((r) => ({ kind: 'observation' as const, ...r }));
}

async function selectSummaries(
  d: Db,
  v: Viewer,
  where: (SQL | undefined)[],
  order: Order | null,
  limit?: number,
  ids?: number[],
) {
  const dir = order === 'oldest' ? asc : desc;
  const q = d
    .select(SUM_FIELDS)
    .from(summaries)
    .innerJoin(projects, eq(projects.id, summaries.projectId))
    .innerJoin(users, eq(users.id, summaries.authorUserId))
    .where(ids ? byIds(summaries.id, ids, canReadSummary(v), ...where) : and(canReadSummary(v), ...where))
    .orderBy(...(order ? [dir(summaries.createdAt), dir(summaries.id)] : []));
  const rows = limit === undefined ? await q : await q.limit(limit);
  return rows.map((r) => ({ kind: 'summary' as const, ...r }));
}

/** Rows of one table that come after the cursor in feed order. */
function afterCursor(t: typeof observations | typeof summaries, kind: Kind, c: FeedCursor): SQL {
  const rank = KIND_RANK[kind] - KIND_RANK[c.kind];
  // Same time: a lower-ranked kind comes after entirely, a higher-ranked one never does, the same kind by id.
  const idBound = rank < 0 ? Number.MAX_SAFE_INTEGER : rank > 0 ? 0 : c.id;
  return or(lt(t.createdAt, c.createdAt), and(eq(t.createdAt, c.createdAt), lt(t.id, idBound)))!;
}

function commonFilters(t: typeof observations | typeof summaries, kind: Kind, f: FeedFilter): (SQL | undefined)[] {
  return [
    f.projectIds ? inJsonList(t.projectId, f.projectIds) : undefined,
    f.author ? eq(users.handle, f.author) : undefined,
    f.before ? afterCursor(t, kind, f.before) : undefined,
  ];
}

/** One page of the feed (at most `limit + 1` items, newest first; the extra one tells there is a next page). */
export type FeedRow =
  | Awaited<ReturnType<typeof selectObservations>>[number]
  | Awaited<ReturnType<typeof selectSummaries>>[number];

export async function feedPage(d1: D1Database | Db, viewer: Viewer, f: FeedFilter): Promise<FeedRow[]> {
  const d = dbOf(d1);
  const queries: Promise<FeedRow[]>[] = [];
  if (f.type !== 'summary') {
    const where = [
      ...commonFilters(observations, 'observation', f),
      f.type ? eq(observations.type, f.type) : undefined,
    ];
    queries.push(selectObservations(d, viewer, where, 'newest', f.limit + 1));
  }
  if (f.type === null || f.type === 'summary')
    queries.push(selectSummaries(d, viewer, commonFilters(summaries, 'summary', f), 'newest', f.limit + 1));
  return (await Promise.all(queries)).flat().sort(compareItems);
}

/** The given rows, each only if the viewer may read it (used by the live hub to re-check every notice). */
export async function feedItemsByIds(
  d1: D1Database | Db,
  viewer: Viewer,
  observationIds: number[],
  summaryIds: number[],
): Promise<FeedRow[]> {
  const d = dbOf(d1);
  const [obs, sums] = await Promise.all([
    observationIds.length ? selectObservations(d, viewer, [], null, undefined, observationIds) : [],
    summaryIds.length ? selectSummaries(d, viewer, [], null, undefined, summaryIds) : [],
  ]);
  return [...obs, ...sums];
}

/** A session with its summaries and observations, oldest first; null when missing or not visible. */
export async function sessionView(d1: D1Database | Db, viewer: Viewer, sessionId: number) {
  const d = dbOf(d1);
  const session = await d
    .select({
      id: sessions.id,
      key: sessions.sessionKey,
      projectKey: projects.key,
      author: users.handle,
      platform: sessions.platform,
      promptCount: sessions.promptCount,
      startedAt: sessions.startedAt,
      endedAt: sessions.endedAt,
    })
    .from(sessions)
    .innerJoin(projects, eq(projects.id, sessions.projectId))
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.id, sessionId), eq(sessions.teamId, viewer.teamId), canSeeProject(viewer)))
    .get();
  if (!session) return null;
  const [obs, sums] = await Promise.all([
    selectObservations(d, viewer, [eq(observations.sessionId, sessionId)], 'oldest', 500),
    selectSummaries(d, viewer, [eq(summaries.sessionId, sessionId)], 'oldest', 100),
  ]);
  return { session, observations: obs, summaries: sums };
}

/** The id of the team's session `key` (visibility is checked when the session is loaded). */
export async function sessionIdByKey(d1: D1Database | Db, teamId: number, key: string): Promise<number | undefined> {
  const row = await dbOf(d1)
    .select({ id: sessions.id })
    .from(sessions)
    .where(and(eq(sessions.teamId, teamId), eq(sessions.sessionKey, key)))
    .get();
  return row?.id;
}

/** Handles of the team's current members, for the viewer's author filter (a team directory, not memory). */
export async function teamHandles(d1: D1Database | Db, teamId: number): Promise<string[]> {
  const rows = await dbOf(d1)
    .select({ handle: users.handle })
    .from(users)
    .where(and(eq(users.teamId, teamId), isNull(users.removedAt)))
    .orderBy(users.handle)
    .limit(500);
  return rows.map((r) => r.handle);
}
