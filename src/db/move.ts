// The D1 side of moving a team between shards (src/transfer/move.ts runs the move): the rows the NDJSON export
// does not carry (audit log, observer usage, project aliases), and emptying the old shard of the team.
import { and, eq, gt, max, or } from 'drizzle-orm';
import { inJsonList, teamChunkDelete } from './sqlite';
import { insertAudit } from './audit';
import { runBatch } from './batch';
import { db } from './client';
import { putAlias } from './project-admin';
import { recordObserverUsage } from './usage';
import {
  auditLog, devices, localVectors, observationEvents, observationFiles, observationSignals, observations, observerUsage, projectAliases, projects, prompts, sessions, summaries, teams, users,
} from './schema';

/** When the team last wrote memory (an observation stored, a prompt or a session begun), or null for none. */
export async function lastWriteAt(d1: D1Database, teamId: number): Promise<number | null> {
  const d = db(d1);
  const [o, p, s] = await d.batch([
    d.select({ at: max(observations.storedAt) }).from(observations).where(eq(observations.teamId, teamId)),
    d.select({ at: max(prompts.createdAt) }).from(prompts).where(eq(prompts.teamId, teamId)),
    d.select({ at: max(sessions.startedAt) }).from(sessions).where(eq(sessions.teamId, teamId)),
  ]);
  const times = [o[0]?.at, p[0]?.at, s[0]?.at].filter((t): t is number => typeof t === 'number');
  return times.length ? Math.max(...times) : null;
}

/** Every project of the team (a move takes them all, private ones too). */
export async function teamProjectIds(d1: D1Database, teamId: number): Promise<number[]> {
  const rows = await db(d1).select({ id: projects.id }).from(projects).where(eq(projects.teamId, teamId)).orderBy(projects.id);
  return rows.map((r) => r.id);
}

/**
 * Copies what the export leaves out from `from` to `to`, after the export's rows were imported there: the
 * audit log as it is (actors are directory ids, the same on both), observer usage with its session ids and
 * project aliases with their project ids translated through session keys and project keys. Each goes
 * through its table's one insert path.
 */
export async function copyTeamExtras(from: D1Database, to: D1Database, teamId: number): Promise<void> {
  const [src, dst] = [db(from), db(to)];
  const [audit, usage, aliases, oldSessions, newSessions, oldProjects, newProjects] = await Promise.all([
    src.select().from(auditLog).where(eq(auditLog.teamId, teamId)).orderBy(auditLog.id),
    src.select().from(observerUsage).where(eq(observerUsage.teamId, teamId)),
    src.select().from(projectAliases).where(eq(projectAliases.teamId, teamId)),
    src.select({ id: sessions.id, key: sessions.sessionKey }).from(sessions).where(eq(sessions.teamId, teamId)),
    dst.select({ id: sessions.id, key: sessions.sessionKey }).from(sessions).where(eq(sessions.teamId, teamId)),
    src.select({ id: projects.id, key: projects.key }).from(projects).where(eq(projects.teamId, teamId)),
    dst.select({ id: projects.id, key: projects.key }).from(projects).where(eq(projects.teamId, teamId)),
  ]);
  const translate = (old: { id: number; key: string }[], now: { id: number; key: string }[]) => {
    const byKey = new Map(now.map((r) => [r.key, r.id]));
    return new Map(old.flatMap((r) => (byKey.has(r.key) ? [[r.id, byKey.get(r.key)!] as const] : [])));
  };
  const session = translate(oldSessions, newSessions);
  const project = translate(oldProjects, newProjects);
  await runBatch(dst, [
    ...audit.map((a) => insertAudit(dst, { teamId, actorUserId: a.actorUserId, action: a.action, target: a.target, detail: parsedDetail(a.detail), at: a.createdAt })),
    ...aliases.flatMap((a) => (project.has(a.projectId) ? [putAlias(dst, teamId, a.key, project.get(a.projectId)!, a.createdAt)] : [])),
  ]);
  for (const { teamId: _t, sessionId, ...u } of usage) {
    const moved = session.get(sessionId);
    if (moved !== undefined) await recordObserverUsage(to, { ...u, teamId, sessionId: moved });
  }
}

const parsedDetail = (text: string): Record<string, unknown> => {
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

/**
 * Deletes every row of the team's memory from `d1` (FTS rows go with their delete triggers; the caller purges
 * the index segments), and with `copies` also the shard's copy of the team's directory rows. Never called with
 * `copies` on the directory, where those rows are the source.
 */
export async function deleteTeamRows(d1: D1Database, teamId: number, opts: { copies: boolean }): Promise<void> {
  const d = db(d1);
  await runBatch(d, [
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
    d.delete(auditLog).where(eq(auditLog.teamId, teamId)),
    ...(opts.copies
      ? [d.delete(devices).where(eq(devices.teamId, teamId)), d.delete(users).where(eq(users.teamId, teamId)), d.delete(teams).where(eq(teams.id, teamId))]
      : []),
  ]);
}

/** A session's row on `d1` by its key (a team move re-points a session object's buffered events at it). */
export async function sessionRowByKey(d1: D1Database, teamId: number, key: string): Promise<{ id: number; projectId: number } | null> {
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
  const rows = await db(d1).select({ id: projects.id, key: projects.key }).from(projects).where(and(eq(projects.teamId, teamId), inJsonList(projects.key, keys)));
  return new Map(rows.map((r) => [r.key, r.id]));
}

// --- a move in bounded steps (src/transfer/move-job.ts) ------------------------------------------------------

/** The team's tables in the order their rows can go (rows that reference others first). */
const TEAM_TABLES = ['observation_events', 'observation_signals', 'observation_files', 'local_vectors', 'observations', 'summaries', 'prompts', 'observer_usage', 'sessions', 'project_aliases', 'projects', 'audit_log'] as const;
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

/** Where copying the rows an export leaves out has got to. */
export interface ExtrasCursor {
  /** 0: the audit log (by id), 1: observer usage (by session), 2: project aliases, 3: done. */
  part: number;
  after: number;
  /** Aliases (part 2) page by key: the last key copied. */
  afterKey?: string;
}

/**
 * Copies one page (at most `limit` rows) of what the export leaves out, from `from` to `to`, in one batch:
 * the audit log as it is, observer usage and aliases with session and project ids translated through their
 * keys (the export's rows are on `to` already). Answers the cursor after it.
 */
export async function copyExtrasPage(from: D1Database, to: D1Database, teamId: number, c: ExtrasCursor, limit: number): Promise<ExtrasCursor> {
  const [src, dst] = [db(from), db(to)];
  if (c.part === 0) {
    const rows = await src.select().from(auditLog).where(and(eq(auditLog.teamId, teamId), gt(auditLog.id, c.after))).orderBy(auditLog.id).limit(limit);
    await runBatch(dst, rows.map((a) => insertAudit(dst, { teamId, actorUserId: a.actorUserId, action: a.action, target: a.target, detail: parsedDetail(a.detail), at: a.createdAt })));
    return rows.length < limit ? { part: 1, after: 0 } : { part: 0, after: rows[rows.length - 1]!.id };
  }
  const translate = async (table: typeof sessions | typeof projects, ids: number[]) => {
    const keyCol = table === sessions ? sessions.sessionKey : projects.key;
    const old = await src.select({ id: table.id, key: keyCol }).from(table).where(and(eq(table.teamId, teamId), inJsonList(table.id, ids.length ? ids : [-1])));
    const now = await dst.select({ id: table.id, key: keyCol }).from(table).where(and(eq(table.teamId, teamId), inJsonList(keyCol, old.length ? old.map((r) => r.key) : [''])));
    const byKey = new Map(now.map((r) => [r.key, r.id]));
    return new Map(old.flatMap((r) => (byKey.has(r.key) ? [[r.id, byKey.get(r.key)!] as const] : [])));
  };
  if (c.part === 1) {
    // Pages by session id: a session's usage rows (one a day and model) come together.
    const rows = await src.select().from(observerUsage).where(and(eq(observerUsage.teamId, teamId), gt(observerUsage.sessionId, c.after))).orderBy(observerUsage.sessionId).limit(limit);
    const last = rows[rows.length - 1]?.sessionId;
    const whole = rows.length < limit ? rows : rows.filter((r) => r.sessionId !== last);
    const page = whole.length ? whole : rows;
    const moved = await translate(sessions, [...new Set(page.map((r) => r.sessionId))]);
    for (const { teamId: _t, sessionId, ...u } of page) {
      const id = moved.get(sessionId);
      if (id !== undefined) await recordObserverUsage(to, { ...u, teamId, sessionId: id });
    }
    return rows.length < limit ? { part: 2, after: 0 } : { part: 1, after: page[page.length - 1]!.sessionId };
  }
  if (c.part === 2) {
    // Every alias, a page at a time by key (an upsert each: a page copied twice changes nothing).
    const rows = await src.select().from(projectAliases).where(and(eq(projectAliases.teamId, teamId), gt(projectAliases.key, c.afterKey ?? ''))).orderBy(projectAliases.key).limit(limit);
    const moved = await translate(projects, [...new Set(rows.map((a) => a.projectId))]);
    await runBatch(dst, rows.flatMap((a) => (moved.has(a.projectId) ? [putAlias(dst, teamId, a.key, moved.get(a.projectId)!, a.createdAt)] : [])));
    return rows.length < limit ? { part: 3, after: 0 } : { part: 2, after: 0, afterKey: rows[rows.length - 1]!.key };
  }
  return c;
}

/**
 * The project a job asked for before a move may have gone on: its id where the team is now. `id` if it still
 * names the project `key` on `d1`, else the project of that key there (a move gives rows new ids), else null.
 */
export async function projectIdAfterMove(d1: D1Database, teamId: number, id: number, key: string): Promise<number | null> {
  const rows = await db(d1)
    .select({ id: projects.id, key: projects.key })
    .from(projects)
    .where(and(eq(projects.teamId, teamId), or(eq(projects.id, id), eq(projects.key, key))));
  return (rows.find((r) => r.id === id && r.key === key) ?? rows.find((r) => r.key === key))?.id ?? null;
}
