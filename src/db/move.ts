// The D1 side of moving a team between shards (src/transfer/move-job.ts runs the move): finding rows by key on
// the new database and emptying the old one of the team (what the export does not carry: move-extras.ts).
import { and, asc, desc, eq, gt, lt, max, or, type SQL } from 'drizzle-orm';
import { inJsonList, teamChunkDelete } from './sqlite';
import { runBatch } from './batch';
import { db } from './client';
import {
  auditLog,
  checkouts,
  devices,
  localVectors,
  observationEvents,
  observationFiles,
  observationSignals,
  primeTombstones,
  observations,
  observerUsage,
  projectAliases,
  projects,
  prompts,
  receipts,
  sessions,
  summaries,
  teams,
  users,
} from './schema';

/** When the team last wrote memory (an observation stored, a prompt or a session begun), or null for none. */
export async function lastWriteAt(d1: D1Database, teamId: number): Promise<number | null> {
  const d = db(d1);
  const [o, p, s] = await d.batch([
    d
      .select({ at: max(observations.storedAt) })
      .from(observations)
      .where(eq(observations.teamId, teamId)),
    d
      .select({ at: max(prompts.createdAt) })
      .from(prompts)
      .where(eq(prompts.teamId, teamId)),
    d
      .select({ at: max(sessions.startedAt) })
      .from(sessions)
      .where(eq(sessions.teamId, teamId)),
  ]);
  const times = [o[0]?.at, p[0]?.at, s[0]?.at].filter((t): t is number => typeof t === 'number');
  return times.length ? Math.max(...times) : null;
}

/** Every project of the team (a move takes them all, private ones too). */
export async function teamProjectIds(d1: D1Database, teamId: number): Promise<number[]> {
  const rows = await db(d1)
    .select({ id: projects.id })
    .from(projects)
    .where(eq(projects.teamId, teamId))
    .orderBy(projects.id);
  return rows.map((r) => r.id);
}

/**
 * Deletes every row of the team's memory from `d1` (FTS rows go with their delete triggers; the caller purges
 * the index segments), and with `copies` also the shard's copy of the team's directory rows. Never called with
 * `copies` on the directory, where those rows are the source.
 */
export async function deleteTeamRows(d1: D1Database, teamId: number, opts: { copies: boolean }): Promise<void> {
  const d = db(d1);
  await runBatch(d, [
    d.delete(receipts).where(eq(receipts.teamId, teamId)),
    d.delete(observationEvents).where(eq(observationEvents.teamId, teamId)),
    d.delete(observationSignals).where(eq(observationSignals.teamId, teamId)),
    d.delete(observationFiles).where(eq(observationFiles.teamId, teamId)),
    d.delete(localVectors).where(eq(localVectors.teamId, teamId)),
    d.delete(observations).where(eq(observations.teamId, teamId)),
    d.delete(summaries).where(eq(summaries.teamId, teamId)),
    d.delete(prompts).where(eq(prompts.teamId, teamId)),
    d.delete(observerUsage).where(eq(observerUsage.teamId, teamId)),
    d.delete(sessions).where(eq(sessions.teamId, teamId)),
    d.delete(projectAliases).where(eq(projectAliases.teamId, teamId)),
    d.delete(projects).where(eq(projects.teamId, teamId)),
    d.delete(primeTombstones).where(eq(primeTombstones.teamId, teamId)),
    d.delete(checkouts).where(eq(checkouts.teamId, teamId)),
    d.delete(auditLog).where(eq(auditLog.teamId, teamId)),
    ...(opts.copies
      ? [
          d.delete(devices).where(eq(devices.teamId, teamId)),
          d.delete(users).where(eq(users.teamId, teamId)),
          d.delete(teams).where(eq(teams.id, teamId)),
        ]
      : []),
  ]);
}

/** A session's row on `d1` by its key (a team move re-points a session object's buffered events at it). */
export async function sessionRowByKey(
  d1: D1Database,
  teamId: number,
  key: string,
): Promise<{ id: number; projectId: number } | null> {
  const row = await db(d1)
    .select({ id: sessions.id, projectId: sessions.projectId })
    .from(sessions)
    .where(and(eq(sessions.teamId, teamId), eq(sessions.sessionKey, key)))
    .get();
  return row ?? null;
}

/** Project ids on `d1` by stored key. */
export async function projectIdsByKeys(d1: D1Database, teamId: number, keys: string[]): Promise<Map<string, number>> {
  if (keys.length === 0) return new Map();
  const rows = await db(d1)
    .select({ id: projects.id, key: projects.key })
    .from(projects)
    .where(and(eq(projects.teamId, teamId), inJsonList(projects.key, keys)));
  return new Map(rows.map((r) => [r.key, r.id]));
}

// --- a move in bounded steps (src/transfer/move-job.ts) ------------------------------------------------------

/** The team's tables in the order their rows can go (rows that reference others first). */
const TEAM_TABLES = [
  // Not copied by a move (which memories went into which session, db/receipts.ts): sessions carry on without them.
  'receipts',
  'observation_events',
  'observation_signals',
  'observation_files',
  'local_vectors',
  'observations',
  'summaries',
  'prompts',
  'observer_usage',
  'sessions',
  'project_aliases',
  'prime_tombstones',
  // Not copied by a move: the project ids change, and each device's next SessionStart reports its checkout again.
  'checkouts',
  'projects',
  'audit_log',
  // A move's change log and its switch (migration 0024): last, after every delete that the log could note.
  'move_changes',
  'move_tracking',
] as const;
/** The shard's copy of the team's directory rows, after its memory. */
const COPY_TABLES = ['devices', 'users'] as const;

/** How many delete statements `deleteTeamChunk` walks through with `copies` (the last one: the team row). */
export const deleteSteps = (copies: boolean): number => TEAM_TABLES.length + (copies ? COPY_TABLES.length + 1 : 0);

/**
 * Deletes at most `limit` of the team's rows of table number `t` (see deleteSteps) from `d1`, one statement;
 * answers how many went (0: that table is done). Small statements keep the database free for other teams:
 * each observation deleted also deletes its FTS row. observer_usage (no rowid, no FTS) goes at once.
 */
export async function deleteTeamChunk(d1: D1Database, teamId: number, t: number, limit: number): Promise<number> {
  const d = db(d1);
  const name = [...TEAM_TABLES, ...COPY_TABLES, 'teams'][t];
  if (name === undefined) return 0;
  const res = await d.run(teamChunkDelete(name, teamId, limit));
  return res.meta.changes ?? 0;
}

/**
 * The project a job asked for before a move may have gone on: its id where the team is now. `id` if it still
 * names the project `key` on `d1`, else the project of that key there (a move gives rows new ids), else null.
 */
export async function projectIdAfterMove(
  d1: D1Database,
  teamId: number,
  id: number,
  key: string,
): Promise<number | null> {
  const rows = await db(d1)
    .select({ id: projects.id, key: projects.key })
    .from(projects)
    .where(and(eq(projects.teamId, teamId), or(eq(projects.id, id), eq(projects.key, key))));
  return (rows.find((r) => r.id === id && r.key === key) ?? rows.find((r) => r.key === key))?.id ?? null;
}

/** The record tables whose rows have vectors (a move deletes the old database's ones, src/transfer/move-job.ts). */
export type RecordTable = 'observations' | 'summaries' | 'prompts';
const RECORD_TABLES = { observations, summaries, prompts } as const;

/** Where a walk through one project's records of one table is: the last row given out (newest first). */
export interface RecordMark {
  at: number;
  id: number;
}

/**
 * Up to `limit` ids of one project's records of `table`, newest first, after `from`: a keyset on the project's
 * time index (team, project, created_at DESC, and the row id the index ends with), so a page reads about the
 * rows it answers however large the team, and however its ids interleave with other teams' on a shared database
 * (a walk by id would read every other team's rows in between). Two reads in one batch: the rest of `from`'s
 * millisecond by id (an index seek; one `created_at <= at AND (… OR id > …)` read re-read every row of a
 * millisecond shared by many rows, as an import's are), then older rows.
 */
export async function projectRecordPage(
  d1: D1Database,
  teamId: number,
  table: RecordTable,
  projectId: number,
  from: RecordMark | null,
  limit: number,
): Promise<RecordMark[]> {
  const t = RECORD_TABLES[table];
  const d = db(d1);
  const page = (where: SQL | undefined) =>
    d
      .select({ at: t.createdAt, id: t.id })
      .from(t)
      .where(and(eq(t.teamId, teamId), eq(t.projectId, projectId), where))
      .orderBy(desc(t.createdAt), asc(t.id))
      .limit(limit);
  if (from === null) return page(undefined);
  const [ties, older] = await d.batch([
    page(and(eq(t.createdAt, from.at), gt(t.id, from.id))),
    page(lt(t.createdAt, from.at)),
  ]);
  return [...ties, ...older].slice(0, limit);
}
