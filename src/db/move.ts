// The D1 side of moving a team between shards (src/transfer/move.ts runs the move): the rows the NDJSON export
// does not carry (audit log, observer usage, project aliases), and emptying the old shard of the team.
import { eq, max } from 'drizzle-orm';
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
