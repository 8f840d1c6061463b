// The handoff's reads (issue 36, continue anywhere): one session's last prompts, latest summary, newest observations,
// open todos and handoff notes, each through the one visibility rule (so rows held back from the reader stay out), and
// which session a key or `--last` names. Every statement names the session row by id or the caller by user id.
import { and, desc, eq, gt, inArray, isNull, notInArray, notLike } from 'drizzle-orm';
import { db as dbOf, type Db } from '../db/client';
import { devices, observations, projects, prompts, sessions, summaries, users } from '../db/schema';
import { canReadObservation, canReadPrompt, canReadSummary, canSeeProject, type Viewer } from '../db/visibility';
import { SERVER_SESSION_PREFIXES } from '../db/write-policy';
import { HANDOFF_SOURCE, TODOS_SOURCE } from '../store/session-notes';

const SESSION = {
  id: sessions.id,
  key: sessions.sessionKey,
  projectId: sessions.projectId,
  project: projects.key,
  userId: sessions.userId,
  author: users.handle,
  device: devices.name,
  platform: sessions.platform,
  startedAt: sessions.startedAt,
  endedAt: sessions.endedAt,
  gitBranch: sessions.gitBranch,
  gitCommit: sessions.gitCommit,
};

export type HandoffSession = Awaited<ReturnType<typeof sessionByKey>>;

const sessionRows = (d: Db) =>
  d
    .select(SESSION)
    .from(sessions)
    .innerJoin(projects, eq(projects.id, sessions.projectId))
    .innerJoin(users, eq(users.id, sessions.userId))
    .leftJoin(devices, eq(devices.id, sessions.deviceId));

/** Session `key` when it is in a project the viewer may see (a teammate's of a team project too); else undefined. */
export function sessionByKey(d1: D1Database | Db, v: Viewer, key: string) {
  return sessionRows(dbOf(d1))
    .where(and(eq(sessions.teamId, v.teamId), eq(sessions.sessionKey, key), canSeeProject(v)))
    .get();
}

/**
 * The viewer's own latest agent session (not a `manual:` or `import:` one) in one of `projectIds` that got a prompt,
 * on any device: what `cairn continue --last` picks up.
 */
export function latestOwnSession(d1: D1Database | Db, v: Viewer, projectIds: readonly number[]) {
  return sessionRows(dbOf(d1))
    .where(
      and(
        eq(sessions.teamId, v.teamId),
        eq(sessions.userId, v.userId),
        inArray(sessions.projectId, [...projectIds]),
        gt(sessions.promptCount, 0),
        canSeeProject(v),
        ...SERVER_SESSION_PREFIXES.map((p) => notLike(sessions.sessionKey, `${p}%`)),
      ),
    )
    .orderBy(desc(sessions.startedAt), desc(sessions.id))
    .limit(1)
    .get();
}

/** How much of a session a handoff reads at most. */
export const HANDOFF_PROMPTS = 5;
export const HANDOFF_OBSERVATIONS = 8;
export const HANDOFF_NOTES = 2;

/** What the handoff shows of session `sessionDbId`, as `v` may read it (five statements, each bounded). */
export async function handoffRows(d1: D1Database | Db, v: Viewer, sessionDbId: number) {
  const d = dbOf(d1);
  const obs = (source: 'work' | typeof TODOS_SOURCE | typeof HANDOFF_SOURCE, limit: number) =>
    d
      .select({
        id: observations.id,
        createdAt: observations.createdAt,
        type: observations.type,
        title: observations.title,
        narrative: observations.narrative,
        facts: observations.facts,
        source: observations.source,
        gitBranch: observations.gitBranch,
        gitCommit: observations.gitCommit,
      })
      .from(observations)
      .where(
        and(
          eq(observations.sessionId, sessionDbId),
          canReadObservation(v),
          source === 'work'
            ? and(isNull(observations.supersededBy), notInArray(observations.source, [TODOS_SOURCE, HANDOFF_SOURCE]))
            : eq(observations.source, source),
        ),
      )
      .orderBy(desc(observations.createdAt), desc(observations.id))
      .limit(limit);
  const [asked, summary, work, todos, notes] = await Promise.all([
    d
      .select({ id: prompts.id, number: prompts.promptNumber, text: prompts.text, createdAt: prompts.createdAt })
      .from(prompts)
      .where(and(eq(prompts.sessionId, sessionDbId), canReadPrompt(v)))
      .orderBy(desc(prompts.promptNumber))
      .limit(HANDOFF_PROMPTS),
    d
      .select({
        id: summaries.id,
        createdAt: summaries.createdAt,
        request: summaries.request,
        investigated: summaries.investigated,
        learned: summaries.learned,
        completed: summaries.completed,
        nextSteps: summaries.nextSteps,
      })
      .from(summaries)
      .where(and(eq(summaries.sessionId, sessionDbId), canReadSummary(v)))
      .orderBy(desc(summaries.createdAt), desc(summaries.id))
      .limit(1)
      .get(),
    obs('work', HANDOFF_OBSERVATIONS),
    obs(TODOS_SOURCE, 1),
    obs(HANDOFF_SOURCE, HANDOFF_NOTES),
  ]);
  return { prompts: asked.reverse(), summary: summary ?? null, work, todos: todos[0] ?? null, notes };
}

/** Session `key` of the team as the write policy needs it (the one a handoff note is written into); undefined if none. */
export function sessionForWrite(d1: D1Database | Db, teamId: number, key: string) {
  return dbOf(d1)
    .select({
      id: sessions.id,
      projectId: sessions.projectId,
      importedAt: sessions.importedAt,
      userId: sessions.userId,
    })
    .from(sessions)
    .where(and(eq(sessions.teamId, teamId), eq(sessions.sessionKey, key)))
    .get();
}
