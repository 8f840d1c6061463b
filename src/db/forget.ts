// Forgetting in D1: memory rows are deleted, not hidden. Deleting a row fires its FTS5 delete trigger, so
// the text leaves the full-text index too; file rows and local vectors go in the same batch. What remains is
// the audit row (who forgot which id, when; never the text). Vectorize is cleared by the caller.
import { and, count as countAll, eq, gt, inArray, type SQL } from 'drizzle-orm';
import { db, type Db } from './client';
import { insertAudit } from './audit';
import { deleteCorrectionRows } from './corrections';
import { notPersonal } from './projects';
import { boundValue, byIds, inJsonList, jsonCounts, projectIdByKey } from './sqlite';
import { canReadObservation, canReadPrompt, canReadSummary, canSeeProject, type Viewer } from './visibility';
import {
  localVectors,
  observationFiles,
  observations,
  projectAliases,
  projects,
  prompts,
  sessions,
  summaries,
  primeTombstones,
} from './schema';
import { deleteProjectCheckouts } from './evidence';
import { deleteProjectReceipts, deleteSessionReceipts } from './receipts';

/** A memory row the caller named, with what the permission check needs. */
export interface ForgettableRow {
  id: number;
  projectId: number;
  authorUserId: number;
  sessionId: number;
}

export interface ForgetAudit {
  actorUserId: number;
  /** e.g. `observation:12`, `session:abc`, `project:github.com/acme/w`. */
  target: string;
  detail: Record<string, unknown>;
  at: number;
}

export interface ForgetCounts {
  observations: number;
  summaries: number;
  prompts: number;
  sessions: number;
}

export type RecordKind = 'observation' | 'summary' | 'prompt';

const READABLE = {
  observation: { table: observations, rule: (v: Viewer) => canReadObservation(v) },
  summary: { table: summaries, rule: (v: Viewer) => canReadSummary(v) },
  prompt: { table: prompts, rule: (v: Viewer) => canReadPrompt(v) },
} as const;

/** Whether the viewer may read the record at all (the one visibility rule decides; unseen = not found). */
export async function canSee(d1: D1Database, v: Viewer, kind: RecordKind, id: number): Promise<boolean> {
  const t = READABLE[kind];
  const row = await db(d1)
    .select({ id: t.table.id })
    .from(t.table)
    .where(and(eq(t.table.id, id), t.rule(v)))
    .get();
  return row !== undefined;
}

/** Whether a project is one the user may read (team-visible, or their own private one). */
export async function projectVisible(
  d1: D1Database,
  teamId: number,
  userId: number,
  projectId: number,
): Promise<boolean> {
  const row = await db(d1)
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.id, projectId), canSeeProject({ teamId, userId })))
    .get();
  return row !== undefined;
}

export async function findObservation(d1: D1Database, teamId: number, id: number): Promise<ForgettableRow | null> {
  const [row] = await db(d1)
    .select({
      id: observations.id,
      projectId: observations.projectId,
      authorUserId: observations.authorUserId,
      sessionId: observations.sessionId,
    })
    .from(observations)
    .where(and(eq(observations.teamId, teamId), eq(observations.id, id)));
  return row ?? null;
}

export async function findSummary(d1: D1Database, teamId: number, id: number): Promise<ForgettableRow | null> {
  const [row] = await db(d1)
    .select({
      id: summaries.id,
      projectId: summaries.projectId,
      authorUserId: summaries.authorUserId,
      sessionId: summaries.sessionId,
    })
    .from(summaries)
    .where(and(eq(summaries.teamId, teamId), eq(summaries.id, id)));
  return row ?? null;
}

export async function findPrompt(d1: D1Database, teamId: number, id: number): Promise<ForgettableRow | null> {
  const [row] = await db(d1)
    .select({
      id: prompts.id,
      projectId: prompts.projectId,
      authorUserId: prompts.authorUserId,
      sessionId: prompts.sessionId,
    })
    .from(prompts)
    .where(and(eq(prompts.teamId, teamId), eq(prompts.id, id)));
  return row ?? null;
}

export interface SessionRef {
  id: number;
  sessionKey: string;
  projectId: number;
  userId: number;
}

export async function findSession(d1: D1Database, teamId: number, sessionKey: string): Promise<SessionRef | null> {
  const [row] = await db(d1)
    .select({
      id: sessions.id,
      sessionKey: sessions.sessionKey,
      projectId: sessions.projectId,
      userId: sessions.userId,
    })
    .from(sessions)
    .where(and(eq(sessions.teamId, teamId), eq(sessions.sessionKey, sessionKey)));
  return row ?? null;
}

export async function sessionsOfProject(d1: D1Database, teamId: number, projectId: number): Promise<string[]> {
  const rows = await db(d1)
    .select({ key: sessions.sessionKey })
    .from(sessions)
    .where(and(eq(sessions.teamId, teamId), eq(sessions.projectId, projectId)));
  return rows.map((r) => r.key);
}

const auditRow = (d: Db, teamId: number, a: ForgetAudit) =>
  insertAudit(d, {
    teamId,
    actorUserId: a.actorUserId,
    action: 'forget',
    target: a.target,
    detail: a.detail,
    at: a.at,
  });

/** The one insert path of prime_tombstones: a forget's (tombstonePrimed), a move's (copyTombstone), an import's
 * (importTombstone). */
function insertTombstones(d: Db) {
  return d.insert(primeTombstones);
}

/**
 * A tombstone for each primed note among the observations `where` names (src/recall/prime.ts): its content hash,
 * never its text, so priming the project again does not bring back what someone forgot.
 */
const tombstonePrimed = (d: Db, where: SQL | undefined, at: number) =>
  insertTombstones(d)
    .select(
      d
        .select({
          teamId: observations.teamId,
          projectId: observations.projectId,
          hash: observations.contentHash,
          createdAt: boundValue(at).as('created_at'),
        })
        .from(observations)
        .where(and(where, eq(observations.source, 'prime'))),
    )
    .onConflictDoNothing();

/** Tombstones as they stand, onto another database (a team move, project ids translated): one statement each, and
 * a page copied twice adds nothing. */
export const copyTombstone = (d: Db, t: typeof primeTombstones.$inferInsert) =>
  insertTombstones(d).values(t).onConflictDoNothing();

/**
 * A tombstone an import or a restore carries (a `tombstone` line of the export), into the project `project` names:
 * by id, or by key looked up inside the batch that may make it, and then only a project `writer` may write (the
 * write policy's rule; null: a restore). No such project: nothing is written; the same line twice adds nothing.
 */
export const importTombstone = (
  d: Db,
  teamId: number,
  project: { id: number } | { key: string; writer: number | null },
  hash: string,
  at: number,
) =>
  insertTombstones(d)
    .select(
      d
        .select({
          teamId: projects.teamId,
          projectId: projects.id,
          hash: boundValue(hash).as('hash'),
          createdAt: boundValue(at).as('created_at'),
        })
        .from(projects)
        .where(
          and(
            eq(projects.teamId, teamId),
            eq(projects.id, 'id' in project ? project.id : projectIdByKey(teamId, project.key, project.writer)),
          ),
        ),
    )
    .onConflictDoNothing();

/** Which of `hashes` were primed into the project and forgotten since (see tombstonePrimed). */
export async function tombstonedHashes(
  d1: D1Database | Db,
  teamId: number,
  projectId: number,
  hashes: readonly string[],
): Promise<Set<string>> {
  if (!hashes.length) return new Set();
  const rows = await db(d1)
    .select({ hash: primeTombstones.hash })
    .from(primeTombstones)
    .where(
      and(
        eq(primeTombstones.teamId, teamId),
        eq(primeTombstones.projectId, projectId),
        inJsonList(primeTombstones.hash, hashes),
      ),
    );
  return new Set(rows.map((r) => r.hash));
}

/** Deletes observations (with their file rows and local vectors) and writes the audit row, in one batch. */
export async function deleteObservations(
  d1: D1Database,
  teamId: number,
  ids: number[],
  audit: ForgetAudit,
): Promise<number> {
  const d = db(d1);
  const [, , , , , gone] = await d.batch([
    tombstonePrimed(d, byIds(observations.id, ids, eq(observations.teamId, teamId)), audit.at),
    ...deleteCorrectionRows(d, teamId, ids),
    d.delete(observationFiles).where(byIds(observationFiles.observationId, ids, eq(observationFiles.teamId, teamId))),
    d
      .delete(localVectors)
      .where(
        and(
          eq(localVectors.teamId, teamId),
          eq(localVectors.kind, 'observation'),
          inJsonList(localVectors.recordId, ids),
        ),
      ),
    d
      .delete(observations)
      .where(byIds(observations.id, ids, eq(observations.teamId, teamId)))
      .returning({ id: observations.id }),
    auditRow(d, teamId, audit),
  ]);
  return gone.length;
}

export async function deleteSummary(d1: D1Database, teamId: number, id: number, audit: ForgetAudit): Promise<number> {
  const d = db(d1);
  const [, gone] = await d.batch([
    d
      .delete(localVectors)
      .where(and(eq(localVectors.teamId, teamId), eq(localVectors.kind, 'summary'), eq(localVectors.recordId, id))),
    d
      .delete(summaries)
      .where(and(eq(summaries.teamId, teamId), eq(summaries.id, id)))
      .returning({ id: summaries.id }),
    auditRow(d, teamId, audit),
  ]);
  return gone.length;
}

export async function deletePrompt(d1: D1Database, teamId: number, id: number, audit: ForgetAudit): Promise<number> {
  const d = db(d1);
  const [, gone] = await d.batch([
    d
      .delete(localVectors)
      .where(and(eq(localVectors.teamId, teamId), eq(localVectors.kind, 'prompt'), eq(localVectors.recordId, id))),
    d
      .delete(prompts)
      .where(and(eq(prompts.teamId, teamId), eq(prompts.id, id)))
      .returning({ id: prompts.id }),
    auditRow(d, teamId, audit),
  ]);
  return gone.length;
}

/** Ids of the observations, summaries and prompts of a session, a project or the whole team (for the vector index, which lives outside D1). */
export async function recordIdsOf(
  d1: D1Database,
  teamId: number,
  where: { sessionId?: number; projectId?: number },
): Promise<{ observations: number[]; summaries: number[]; prompts: number[] }> {
  const d = db(d1);
  const of = <T extends typeof observations | typeof summaries | typeof prompts>(t: T) =>
    d
      .select({ id: t.id })
      .from(t)
      .where(
        and(
          eq(t.teamId, teamId),
          where.sessionId !== undefined ? eq(t.sessionId, where.sessionId) : undefined,
          where.projectId !== undefined ? eq(t.projectId, where.projectId) : undefined,
        ),
      );
  const [o, s, p] = await d.batch([of(observations), of(summaries), of(prompts)]);
  return { observations: o.map((r) => r.id), summaries: s.map((r) => r.id), prompts: p.map((r) => r.id) };
}

export async function countProject(d1: D1Database, teamId: number, projectId: number): Promise<ForgetCounts> {
  const d = db(d1);
  const count = countAll();
  const [o, s, p, se] = await d.batch([
    d
      .select({ n: count })
      .from(observations)
      .where(and(eq(observations.teamId, teamId), eq(observations.projectId, projectId))),
    d
      .select({ n: count })
      .from(summaries)
      .where(and(eq(summaries.teamId, teamId), eq(summaries.projectId, projectId))),
    d
      .select({ n: count })
      .from(prompts)
      .where(and(eq(prompts.teamId, teamId), eq(prompts.projectId, projectId))),
    d
      .select({ n: count })
      .from(sessions)
      .where(and(eq(sessions.teamId, teamId), eq(sessions.projectId, projectId))),
  ]);
  return { observations: o[0]?.n ?? 0, summaries: s[0]?.n ?? 0, prompts: p[0]?.n ?? 0, sessions: se[0]?.n ?? 0 };
}

/**
 * Deletes everything a session remembered, and the session row, in one batch; with it the observations of other
 * sessions in `merged` (merged into the session's by consolidation: their text stands behind the session's records),
 * and the session's receipts (which memories went into it: db/receipts.ts).
 */
export async function deleteSession(
  d1: D1Database,
  teamId: number,
  session: { id: number; sessionKey: string },
  merged: number[],
  audit: ForgetAudit,
): Promise<ForgetCounts> {
  const sessionId = session.id;
  const d = db(d1);
  const ofSession = <T extends typeof observations | typeof summaries | typeof prompts>(t: T) =>
    d
      .select({ id: t.id })
      .from(t)
      .where(and(eq(t.teamId, teamId), eq(t.sessionId, sessionId)));
  const vectorsOf = (kind: RecordKind, t: typeof observations | typeof summaries | typeof prompts) =>
    d
      .delete(localVectors)
      .where(
        and(eq(localVectors.teamId, teamId), eq(localVectors.kind, kind), inArray(localVectors.recordId, ofSession(t))),
      );
  const [, , , , , , , , , , , , m, o, s, p, se] = await d.batch([
    tombstonePrimed(d, and(eq(observations.teamId, teamId), eq(observations.sessionId, sessionId)), audit.at),
    tombstonePrimed(d, byIds(observations.id, merged, eq(observations.teamId, teamId)), audit.at),
    ...deleteCorrectionRows(d, teamId, ofSession(observations)),
    ...deleteCorrectionRows(d, teamId, merged),
    d
      .delete(observationFiles)
      .where(
        and(eq(observationFiles.teamId, teamId), inArray(observationFiles.observationId, ofSession(observations))),
      ),
    d
      .delete(observationFiles)
      .where(byIds(observationFiles.observationId, merged, eq(observationFiles.teamId, teamId))),
    vectorsOf('observation', observations),
    d
      .delete(localVectors)
      .where(
        and(
          eq(localVectors.teamId, teamId),
          eq(localVectors.kind, 'observation'),
          inJsonList(localVectors.recordId, merged),
        ),
      ),
    vectorsOf('summary', summaries),
    vectorsOf('prompt', prompts),
    d
      .delete(observations)
      .where(byIds(observations.id, merged, eq(observations.teamId, teamId)))
      .returning({ id: observations.id }),
    d
      .delete(observations)
      .where(and(eq(observations.teamId, teamId), eq(observations.sessionId, sessionId)))
      .returning({ id: observations.id }),
    d
      .delete(summaries)
      .where(and(eq(summaries.teamId, teamId), eq(summaries.sessionId, sessionId)))
      .returning({ id: summaries.id }),
    d
      .delete(prompts)
      .where(and(eq(prompts.teamId, teamId), eq(prompts.sessionId, sessionId)))
      .returning({ id: prompts.id }),
    d
      .delete(sessions)
      .where(and(eq(sessions.teamId, teamId), eq(sessions.id, sessionId)))
      .returning({ id: sessions.id }),
    auditRow(d, teamId, audit),
    deleteSessionReceipts(d, teamId, session.sessionKey),
  ]);
  return { observations: m.length + o.length, summaries: s.length, prompts: p.length, sessions: se.length };
}

/** The keys of the sessions that stored `ids` of one kind (their objects may still hold the text in the observer conversation). */
export async function sessionKeysOfRecords(
  d1: D1Database,
  teamId: number,
  kind: RecordKind,
  ids: number[],
): Promise<string[]> {
  if (ids.length === 0) return [];
  const t = READABLE[kind].table;
  const rows = await db(d1)
    .selectDistinct({ key: sessions.sessionKey })
    .from(t)
    .innerJoin(sessions, eq(sessions.id, t.sessionId))
    .where(byIds(t.id, ids, eq(t.teamId, teamId)));
  return rows.map((r) => r.key);
}

/** Deletes a project with everything in it (memory rows, sessions, aliases), in one batch. */
export async function deleteProject(
  d1: D1Database,
  teamId: number,
  projectId: number,
  audit: ForgetAudit,
): Promise<ForgetCounts> {
  const d = db(d1);
  const ofProject = d
    .select({ id: observations.id })
    .from(observations)
    .where(and(eq(observations.teamId, teamId), eq(observations.projectId, projectId)));
  // The audit row first, its detail with the sessions this batch deletes counted in it: a step run again after a
  // restart (the project gone) reads its counts back from it.
  const numbers = Object.fromEntries(
    Object.entries(audit.detail).filter((e): e is [string, number] => typeof e[1] === 'number'),
  );
  const [, , , , , o, s, p, se] = await d.batch([
    insertAudit(d, {
      teamId,
      actorUserId: audit.actorUserId,
      action: 'forget',
      target: audit.target,
      detailSql: jsonCounts({
        ...numbers,
        sessions: d
          .select({ n: countAll() })
          .from(sessions)
          .where(and(eq(sessions.teamId, teamId), eq(sessions.projectId, projectId))),
      }),
      at: audit.at,
    }),
    ...deleteCorrectionRows(d, teamId, ofProject),
    d
      .delete(observationFiles)
      .where(and(eq(observationFiles.teamId, teamId), eq(observationFiles.projectId, projectId))),
    d.delete(localVectors).where(and(eq(localVectors.teamId, teamId), eq(localVectors.projectId, projectId))),
    d
      .delete(observations)
      .where(and(eq(observations.teamId, teamId), eq(observations.projectId, projectId)))
      .returning({ id: observations.id }),
    d
      .delete(summaries)
      .where(and(eq(summaries.teamId, teamId), eq(summaries.projectId, projectId)))
      .returning({ id: summaries.id }),
    d
      .delete(prompts)
      .where(and(eq(prompts.teamId, teamId), eq(prompts.projectId, projectId)))
      .returning({ id: prompts.id }),
    d
      .delete(sessions)
      .where(and(eq(sessions.teamId, teamId), eq(sessions.projectId, projectId)))
      .returning({ id: sessions.id }),
    d.delete(projectAliases).where(and(eq(projectAliases.teamId, teamId), eq(projectAliases.projectId, projectId))),
    d.delete(projects).where(and(eq(projects.teamId, teamId), eq(projects.id, projectId))),
    d.delete(primeTombstones).where(and(eq(primeTombstones.teamId, teamId), eq(primeTombstones.projectId, projectId))),
    deleteProjectCheckouts(d, teamId, projectId),
    deleteProjectReceipts(d, teamId, projectId),
  ]);
  return { observations: o.length, summaries: s.length, prompts: p.length, sessions: se.length };
}

/** Private projects owned by a user (offered for deletion when the user is removed). */
export async function privateProjectsOf(
  d1: D1Database,
  teamId: number,
  userId: number,
): Promise<{ id: number; key: string }[]> {
  return db(d1)
    .select({ id: projects.id, key: projects.key })
    .from(projects)
    .where(and(eq(projects.teamId, teamId), eq(projects.ownerUserId, userId), eq(projects.visibility, 'private')));
}

/**
 * Ids of every project a team export by the user covers: team projects and their own private ones, never a personal
 * memory (theirs is in their own export, GET /api/memory/personal/export).
 */
export async function visibleProjectIds(d1: D1Database, teamId: number, userId: number): Promise<number[]> {
  const rows = await db(d1)
    .select({ id: projects.id })
    .from(projects)
    .where(and(canSeeProject({ teamId, userId }), notPersonal()))
    .orderBy(projects.id);
  return rows.map((r) => r.id);
}

/** Rows of one kind of a project deleted per statement by the forget-project job. */
export const PROJECT_CHUNK = 500;

/** Up to `limit` ids of a project's records of one table (the next chunk to delete). */
export async function projectRecordIds(
  d1: D1Database,
  teamId: number,
  projectId: number,
  kind: RecordKind,
  limit = PROJECT_CHUNK,
): Promise<number[]> {
  const t = READABLE[kind].table;
  const rows = await db(d1)
    .select({ id: t.id })
    .from(t)
    .where(and(eq(t.teamId, teamId), eq(t.projectId, projectId)))
    .limit(limit);
  return rows.map((r) => r.id);
}

/** Deletes one chunk of a project's records of one kind with their file rows and local vectors (one batch, no audit row: the job writes one at its end). */
export async function deleteRecordChunk(
  d1: D1Database,
  teamId: number,
  kind: RecordKind,
  ids: number[],
  mark: { action: string; target: string; field: string; at: number },
): Promise<number> {
  if (ids.length === 0) return 0;
  const d = db(d1);
  const t = READABLE[kind].table;
  // The job's chunk mark (src/jobs/marks.ts), first in the batch: it counts the rows the deletes below remove.
  const marked = insertAudit(d, {
    teamId,
    actorUserId: null,
    action: mark.action,
    target: mark.target,
    detailSql: jsonCounts({
      [mark.field]: d
        .select({ n: countAll() })
        .from(t)
        .where(byIds(t.id, ids, eq(t.teamId, teamId))),
    }),
    at: mark.at,
  });
  // An observation's history and signals refer to it (foreign keys): they go first.
  const files =
    kind === 'observation'
      ? [
          ...deleteCorrectionRows(d, teamId, ids),
          d
            .delete(observationFiles)
            .where(byIds(observationFiles.observationId, ids, eq(observationFiles.teamId, teamId))),
        ]
      : [];
  const out = await d.batch([
    marked,
    d
      .delete(localVectors)
      .where(and(eq(localVectors.teamId, teamId), eq(localVectors.kind, kind), inJsonList(localVectors.recordId, ids))),
    ...files,
    d
      .delete(t)
      .where(byIds(t.id, ids, eq(t.teamId, teamId)))
      .returning({ id: t.id }),
  ] as unknown as Parameters<typeof d.batch>[0]);
  return (out[out.length - 1] as unknown[]).length;
}

/** Up to `limit` session keys of a project, for their Durable Objects (the rows go with the project at the end). */
export async function projectSessionsAfter(
  d1: D1Database,
  teamId: number,
  projectId: number,
  afterId: number,
  limit: number,
): Promise<{ id: number; key: string }[]> {
  return db(d1)
    .select({ id: sessions.id, key: sessions.sessionKey })
    .from(sessions)
    .where(and(eq(sessions.teamId, teamId), eq(sessions.projectId, projectId), gt(sessions.id, afterId)))
    .orderBy(sessions.id)
    .limit(limit);
}
