// Recall reads in D1: the context index, file history and full records by id. Every statement starts from
// the visibility rule (src/db/visibility.ts). Newest-first reads take ONE project at a time: `project_id = ?`
// lets SQLite walk the (team, project, time) index and stop after `limit` rows, where an IN-list would scan
// the whole team's time index.
import { and, count, desc, eq, gte, inArray, isNull, lt, ne, or, type SQL } from 'drizzle-orm';
import { db as dbOf, type Db } from './client';
import { devices, observationFiles, observations, projects, prompts, sessions, summaries, users } from './schema';
import { notPendingReview } from './corrections';
import { TODOS_SOURCE } from './observations';
import { byIds, inJsonList, jsonListIntersects, unindexed, whileUnreleased } from './sqlite';
import { canReadObservation, canReadPrompt, canReadSummary, type Viewer } from './visibility';

/** A row's held kinds while it is held (null once released or never held): the reader is its author or an admin. */
const stillHeld = (t: typeof observations | typeof summaries) => whileUnreleased(t.heldKinds, t.releasedAt);

/**
 * Newest observations of one project that pass the allow-lists: the type must be one of `types`, and a row
 * that has concepts needs at least one of `concepts` (rows without concepts pass). Superseded rows and rows
 * flagged wrong or outdated (pending review) are left out. With `fadedBefore` (src/db/fading.ts) faded rows are
 * left out too: the rows made since the cutoff (a range of the time index), and only when they do not fill
 * `limit` the older rows renewed since it (a range of idx_obs_renewed), so a project whose history has faded is
 * not walked to its first row.
 */
export async function contextObservationsOf(
  d1: D1Database | Db,
  viewer: Viewer,
  projectId: number,
  types: string[],
  concepts: string[],
  limit: number,
  fadedBefore: number | null = null,
) {
  const d = dbOf(d1);
  const rows = (...more: SQL[]) =>
    d
      .select({
        id: observations.id,
        createdAt: observations.createdAt,
        type: observations.type,
        title: observations.title,
        subtitle: observations.subtitle,
        narrative: observations.narrative,
        facts: observations.facts,
        discoveryTokens: observations.discoveryTokens,
        author: users.handle,
        device: devices.name,
        gitBranch: observations.gitBranch,
        gitCommit: observations.gitCommit,
        held: stillHeld(observations),
        source: observations.source,
      })
      .from(observations)
      .innerJoin(users, eq(users.id, observations.authorUserId))
      .leftJoin(devices, eq(devices.id, observations.deviceId))
      .where(
        and(
          eq(observations.projectId, projectId),
          canReadObservation(viewer),
          isNull(observations.supersededBy),
          isNull(observations.mergedInto),
          notPendingReview(viewer.teamId),
          // A session's open todos are its state, not something learned: its handoff shows them.
          ne(observations.source, TODOS_SOURCE),
          inJsonList(observations.type, types),
          or(eq(observations.concepts, '[]'), jsonListIntersects(observations.concepts, concepts)),
          ...more,
        ),
      )
      .orderBy(desc(observations.createdAt), desc(observations.id));
  if (fadedBefore === null) return rows().limit(limit);
  const recent = await rows(gte(observations.createdAt, fadedBefore)).limit(limit);
  if (recent.length >= limit) return recent;
  // The range of renewed rows drives (the time index would walk every older row to find the few renewed).
  const renewed = await rows(
    eq(observations.teamId, viewer.teamId),
    gte(observations.renewedAt, fadedBefore),
    unindexed(lt(observations.createdAt, fadedBefore)),
  ).limit(limit - recent.length);
  return [...recent, ...renewed];
}

/** Newest session summaries of one project. */
export async function contextSummariesOf(d1: D1Database | Db, viewer: Viewer, projectId: number, limit: number) {
  return dbOf(d1)
    .select({
      id: summaries.id,
      createdAt: summaries.createdAt,
      request: summaries.request,
      investigated: summaries.investigated,
      learned: summaries.learned,
      completed: summaries.completed,
      nextSteps: summaries.nextSteps,
      author: users.handle,
      platform: sessions.platform,
      device: devices.name,
      gitBranch: sessions.gitBranch,
      gitCommit: sessions.gitCommit,
      held: stillHeld(summaries),
    })
    .from(summaries)
    .innerJoin(users, eq(users.id, summaries.authorUserId))
    .innerJoin(sessions, eq(sessions.id, summaries.sessionId))
    .leftJoin(devices, eq(devices.id, summaries.deviceId))
    .where(and(eq(summaries.projectId, projectId), canReadSummary(viewer)))
    .orderBy(desc(summaries.createdAt), desc(summaries.id))
    .limit(limit);
}

/** Newest observations of one project whose read or modified files include one of `paths` (current ones: not superseded or pending review). */
export async function fileHistoryOf(
  d1: D1Database | Db,
  viewer: Viewer,
  projectId: number,
  paths: string[],
  limit: number,
) {
  return dbOf(d1)
    .selectDistinct({
      id: observations.id,
      sessionId: observations.sessionId,
      createdAt: observations.createdAt,
      type: observations.type,
      title: observations.title,
      filesRead: observations.filesRead,
      filesModified: observations.filesModified,
      author: users.handle,
      device: devices.name,
    })
    .from(observationFiles)
    .innerJoin(observations, eq(observations.id, observationFiles.observationId))
    .innerJoin(users, eq(users.id, observations.authorUserId))
    .leftJoin(devices, eq(devices.id, observations.deviceId))
    .where(
      and(
        eq(observationFiles.teamId, viewer.teamId),
        eq(observationFiles.projectId, projectId),
        inJsonList(observationFiles.path, paths),
        canReadObservation(viewer),
        isNull(observations.supersededBy),
        isNull(observations.mergedInto),
        notPendingReview(viewer.teamId),
      ),
    )
    .orderBy(desc(observations.createdAt), desc(observations.id))
    .limit(limit);
}

/** Full rows for `ids` the viewer may read (any order; others are absent). */
export async function observationsWithContext(d1: D1Database | Db, viewer: Viewer, ids: number[]) {
  return dbOf(d1)
    .select({
      id: observations.id,
      project: projects.key,
      session: sessions.sessionKey,
      promptNumber: observations.promptNumber,
      type: observations.type,
      title: observations.title,
      subtitle: observations.subtitle,
      facts: observations.facts,
      narrative: observations.narrative,
      concepts: observations.concepts,
      filesRead: observations.filesRead,
      filesModified: observations.filesModified,
      createdAt: observations.createdAt,
      author: users.handle,
      device: devices.name,
      source: observations.source,
      agentType: observations.agentType,
      discoveryTokens: observations.discoveryTokens,
      supersededBy: observations.supersededBy,
    })
    .from(observations)
    .innerJoin(projects, eq(projects.id, observations.projectId))
    .innerJoin(sessions, eq(sessions.id, observations.sessionId))
    .innerJoin(users, eq(users.id, observations.authorUserId))
    .leftJoin(devices, eq(devices.id, observations.deviceId))
    .where(byIds(observations.id, ids, canReadObservation(viewer)));
}

/** Full session summaries among `ids` the viewer may read (any order). */
export async function summariesByIds(d1: D1Database | Db, viewer: Viewer, ids: number[]) {
  return dbOf(d1)
    .select({
      id: summaries.id,
      createdAt: summaries.createdAt,
      project: projects.key,
      author: users.handle,
      request: summaries.request,
      investigated: summaries.investigated,
      learned: summaries.learned,
      completed: summaries.completed,
      nextSteps: summaries.nextSteps,
      notes: summaries.notes,
    })
    .from(summaries)
    .innerJoin(projects, eq(projects.id, summaries.projectId))
    .innerJoin(users, eq(users.id, summaries.authorUserId))
    .where(byIds(summaries.id, ids, canReadSummary(viewer)));
}

/** User prompts among `ids` the viewer may read (any order). */
export async function promptsByIds(d1: D1Database | Db, viewer: Viewer, ids: number[]) {
  return dbOf(d1)
    .select({
      id: prompts.id,
      createdAt: prompts.createdAt,
      project: projects.key,
      author: users.handle,
      promptNumber: prompts.promptNumber,
      text: prompts.text,
    })
    .from(prompts)
    .innerJoin(projects, eq(projects.id, prompts.projectId))
    .innerJoin(users, eq(users.id, prompts.authorUserId))
    .where(byIds(prompts.id, ids, canReadPrompt(viewer)));
}

/**
 * One session's own record so far (the "this session so far" block after a compaction, the status line's
 * count): its newest readable observations, their total, and its newest summary. Walks idx_obs_session.
 */
export async function sessionRecordOf(d1: D1Database | Db, viewer: Viewer, sessionDbId: number, limit: number) {
  const d = dbOf(d1);
  const readable = and(
    eq(observations.sessionId, sessionDbId),
    canReadObservation(viewer),
    isNull(observations.supersededBy),
  );
  const [rows, total, summary] = await Promise.all([
    d
      .select({
        id: observations.id,
        createdAt: observations.createdAt,
        type: observations.type,
        title: observations.title,
        subtitle: observations.subtitle,
      })
      .from(observations)
      .where(readable)
      .orderBy(desc(observations.createdAt), desc(observations.id))
      .limit(limit),
    d.select({ n: count() }).from(observations).where(readable).get(),
    d
      .select({
        id: summaries.id,
        createdAt: summaries.createdAt,
        request: summaries.request,
        completed: summaries.completed,
        learned: summaries.learned,
        nextSteps: summaries.nextSteps,
      })
      .from(summaries)
      .where(and(eq(summaries.sessionId, sessionDbId), canReadSummary(viewer)))
      .orderBy(desc(summaries.createdAt), desc(summaries.id))
      .limit(1)
      .get(),
  ]);
  return { observations: rows, total: total?.n ?? 0, summary: summary ?? null };
}

/**
 * The caller's personal memory (their `#personal/<handle>` project), newest first: what the context index shows
 * of it in every project. One statement; the project is found by its key and owner inside it, so a caller without
 * personal notes costs nothing more. Superseded, merged and flagged notes are left out, as in the index.
 */
export async function personalNotesOf(d1: D1Database | Db, viewer: Viewer, personalKey: string, limit: number) {
  const own = dbOf(d1)
    .select({ id: projects.id })
    .from(projects)
    .where(
      and(
        eq(projects.teamId, viewer.teamId),
        eq(projects.key, personalKey),
        eq(projects.ownerUserId, viewer.userId),
        eq(projects.visibility, 'private'),
      ),
    );
  return dbOf(d1)
    .select({
      id: observations.id,
      createdAt: observations.createdAt,
      title: observations.title,
      narrative: observations.narrative,
      held: stillHeld(observations),
    })
    .from(observations)
    .where(
      and(
        inArray(observations.projectId, own),
        canReadObservation(viewer),
        isNull(observations.supersededBy),
        isNull(observations.mergedInto),
        notPendingReview(viewer.teamId),
      ),
    )
    .orderBy(desc(observations.createdAt), desc(observations.id))
    .limit(limit);
}
