// The team's day in D1 (issue 36): summaries and observations stored in a window, as a reader may read them (the one
// visibility rule: a member for `cairn standup`, every member at once for the digest), newest first and bounded. And
// the digest's record per team on the directory (`digest_runs`): the period it last tried, how many attempts that
// took, when one last went out and up to when it covered, and the failure while it fails (GET /api/admin/health).
import { and, desc, eq, gte, inArray, isNull, lt, notInArray, notLike } from 'drizzle-orm';
import { db as dbOf, type Db } from '../db/client';
import { HANDOFF_SOURCE, TODOS_SOURCE } from '../db/observations';
import { PERSONAL_PREFIX } from '../db/write-policy';
import { digestRuns, observations, projects, summaries, users } from '../db/schema';
import { countWhileSame, firstOf } from '../db/sqlite';
import { canReadObservation, canReadSummary, type Viewer } from '../db/visibility';

export interface DayWindow {
  from: number;
  until: number;
  /** Only this member's rows (their standup); null: everyone the reader may read. */
  author: number | null;
  /** Only this project; null: every project the reader may read. */
  projectId: number | null;
}

/** Rows a standup or digest reads at most, per kind: what a window has beyond that is counted, not shown. */
export const DAY_SUMMARIES = 100;
export const DAY_OBSERVATIONS = 300;

/** Summaries and observations of the window (two statements, each bounded), newest first. */
export async function dayRows(d1: D1Database | Db, v: Viewer, w: DayWindow) {
  const d = dbOf(d1);
  // Personal memory is nobody's work of the day: it stays out even of its owner's standup.
  const notPersonal = notLike(projects.key, `${PERSONAL_PREFIX}%`);
  const sums = d
    .select({
      id: summaries.id,
      createdAt: summaries.createdAt,
      request: summaries.request,
      completed: summaries.completed,
      nextSteps: summaries.nextSteps,
      author: users.handle,
      project: projects.key,
    })
    .from(summaries)
    .innerJoin(users, eq(users.id, summaries.authorUserId))
    .innerJoin(projects, eq(projects.id, summaries.projectId))
    .where(
      and(
        canReadSummary(v),
        gte(summaries.createdAt, w.from),
        lt(summaries.createdAt, w.until),
        w.author === null ? undefined : eq(summaries.authorUserId, w.author),
        w.projectId === null ? undefined : eq(summaries.projectId, w.projectId),
        notPersonal,
      ),
    )
    .orderBy(desc(summaries.createdAt), desc(summaries.id))
    .limit(DAY_SUMMARIES + 1);
  const obs = d
    .select({
      id: observations.id,
      createdAt: observations.createdAt,
      type: observations.type,
      title: observations.title,
      author: users.handle,
      project: projects.key,
    })
    .from(observations)
    .innerJoin(users, eq(users.id, observations.authorUserId))
    .innerJoin(projects, eq(projects.id, observations.projectId))
    .where(
      and(
        canReadObservation(v),
        gte(observations.createdAt, w.from),
        lt(observations.createdAt, w.until),
        isNull(observations.supersededBy),
        isNull(observations.mergedInto),
        // A session's todo list is its state, not work done (its handoff shows it).
        notInArray(observations.source, [TODOS_SOURCE, HANDOFF_SOURCE]),
        w.author === null ? undefined : eq(observations.authorUserId, w.author),
        w.projectId === null ? undefined : eq(observations.projectId, w.projectId),
        notPersonal,
      ),
    )
    .orderBy(desc(observations.createdAt), desc(observations.id))
    .limit(DAY_OBSERVATIONS + 1);
  const [s, o] = await Promise.all([sums, obs]);
  return {
    summaries: s.slice(0, DAY_SUMMARIES),
    observations: o.slice(0, DAY_OBSERVATIONS),
    more: s.length > DAY_SUMMARIES || o.length > DAY_OBSERVATIONS,
  };
}

export type DayRows = Awaited<ReturnType<typeof dayRows>>;

// --- the digest's record -------------------------------------------------------------------------------------

export type DigestRun = typeof digestRuns.$inferSelect;

export async function digestRun(d1: D1Database | Db, teamId: number): Promise<DigestRun | null> {
  return (await dbOf(d1).select().from(digestRuns).where(eq(digestRuns.teamId, teamId)).get()) ?? null;
}

/** The records of a page of teams (≤ 50 ids: the operator's health page), one statement, by team id. */
export async function digestRunsOf(d1: D1Database | Db, teamIds: readonly number[]): Promise<Map<number, DigestRun>> {
  if (!teamIds.length) return new Map();
  const rows = await dbOf(d1)
    .select()
    .from(digestRuns)
    .where(inArray(digestRuns.teamId, [...teamIds]))
    .all();
  return new Map(rows.map((r) => [r.teamId, r]));
}

/**
 * One attempt at `period`, the one write of `digest_runs`: counted (attempts start again at a new period); a failure
 * keeps its error (never the digest's text) and since when the digest fails, a success clears both and moves what was
 * sent up to `until`.
 */
export async function recordDigestAttempt(
  d1: D1Database | Db,
  teamId: number,
  a: { period: string; at: number } & ({ error: string } | { sentUntil: number }),
): Promise<void> {
  const failed = 'error' in a;
  const outcome = failed
    ? { lastError: a.error, failingSince: firstOf(digestRuns.failingSince, a.at) }
    : { lastError: null, failingSince: null, lastOkAt: a.at, sentPeriod: a.period, sentUntil: a.sentUntil };
  await dbOf(d1)
    .insert(digestRuns)
    .values({
      teamId,
      period: a.period,
      attempts: 1,
      lastAttemptAt: a.at,
      ...(failed
        ? { lastError: a.error, failingSince: a.at }
        : { lastOkAt: a.at, sentPeriod: a.period, sentUntil: a.sentUntil }),
    })
    .onConflictDoUpdate({
      target: digestRuns.teamId,
      set: {
        period: a.period,
        attempts: countWhileSame(digestRuns.attempts, digestRuns.period, a.period),
        lastAttemptAt: a.at,
        ...outcome,
      },
    });
}
