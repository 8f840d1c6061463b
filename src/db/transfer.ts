// Export and import in D1: pages of a project's rows for the NDJSON export (keyset by id), and idempotent
// inserts keyed by what survives a move between teams (handles, project keys, session keys, content hashes).
import { and, asc, eq, gt, isNull } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { cjkTerms } from '../lib/cjk';
import { db as dbHandle } from './client';
import { insertObservation as insertObservationRow, insertObservationFiles, type FileRef, type ObservationContent } from './observations';
import { observations, projects, prompts, sessions, summaries, users } from './schema';

export const PAGE = 500;

export async function teamUsers(db: D1Database, teamId: number) {
  return drizzle(db).select({ id: users.id, handle: users.handle, role: users.role, createdAt: users.createdAt }).from(users).where(eq(users.teamId, teamId));
}

export async function projectRow(db: D1Database, teamId: number, projectId: number) {
  const [row] = await drizzle(db)
    .select({ id: projects.id, key: projects.key, visibility: projects.visibility, ownerUserId: projects.ownerUserId, createdAt: projects.createdAt })
    .from(projects)
    .where(and(eq(projects.teamId, teamId), eq(projects.id, projectId)));
  return row ?? null;
}

export async function sessionsPage(db: D1Database, teamId: number, projectId: number, afterId: number) {
  return drizzle(db)
    .select()
    .from(sessions)
    .where(and(eq(sessions.teamId, teamId), eq(sessions.projectId, projectId), gt(sessions.id, afterId)))
    .orderBy(asc(sessions.id))
    .limit(PAGE);
}

export async function promptsPage(db: D1Database, teamId: number, projectId: number, afterId: number) {
  return drizzle(db)
    .select()
    .from(prompts)
    .where(and(eq(prompts.teamId, teamId), eq(prompts.projectId, projectId), gt(prompts.id, afterId)))
    .orderBy(asc(prompts.id))
    .limit(PAGE);
}

export async function observationsPage(db: D1Database, teamId: number, projectId: number, afterId: number) {
  return drizzle(db)
    .select()
    .from(observations)
    .where(and(eq(observations.teamId, teamId), eq(observations.projectId, projectId), isNull(observations.deletedAt), gt(observations.id, afterId)))
    .orderBy(asc(observations.id))
    .limit(PAGE);
}

export async function summariesPage(db: D1Database, teamId: number, projectId: number, afterId: number) {
  return drizzle(db)
    .select()
    .from(summaries)
    .where(and(eq(summaries.teamId, teamId), eq(summaries.projectId, projectId), isNull(summaries.deletedAt), gt(summaries.id, afterId)))
    .orderBy(asc(summaries.id))
    .limit(PAGE);
}

// --- import ---------------------------------------------------------------------------------------------

/** The user with this handle, created as a member (no token, no device) when the team has none. */
export interface Found {
  id: number;
  created: boolean;
}

export async function userByHandle(db: D1Database, teamId: number, handle: string, createdAt: number): Promise<Found> {
  const d = drizzle(db);
  const made = await d.insert(users).values({ teamId, handle, role: 'member', createdAt }).onConflictDoNothing().returning({ id: users.id });
  if (made[0]) return { id: made[0].id, created: true };
  const [row] = await d.select({ id: users.id }).from(users).where(and(eq(users.teamId, teamId), eq(users.handle, handle)));
  if (!row) throw new Error('imported user vanished');
  return { id: row.id, created: false };
}

export async function projectByKey(
  db: D1Database,
  teamId: number,
  p: { key: string; visibility: 'team' | 'private'; ownerUserId: number | null; createdAt: number },
): Promise<Found> {
  const d = drizzle(db);
  const made = await d
    .insert(projects)
    .values({ teamId, key: p.key, visibility: p.visibility, ownerUserId: p.ownerUserId, createdAt: p.createdAt })
    .onConflictDoNothing()
    .returning({ id: projects.id });
  if (made[0]) return { id: made[0].id, created: true };
  const [row] = await d.select({ id: projects.id }).from(projects).where(and(eq(projects.teamId, teamId), eq(projects.key, p.key)));
  if (!row) throw new Error('imported project vanished');
  return { id: row.id, created: false };
}

export interface SessionIn {
  teamId: number;
  sessionKey: string;
  projectId: number;
  userId: number;
  platform: string;
  promptCount: number;
  startedAt: number;
  endedAt: number | null;
}

/** Returns the session's id in this team (an existing session of that key is reused as it is). */
export async function sessionByKey(db: D1Database, s: SessionIn): Promise<Found & { projectId: number }> {
  const d = drizzle(db);
  const made = await d.insert(sessions).values(s).onConflictDoNothing().returning({ id: sessions.id });
  if (made[0]) return { id: made[0].id, created: true, projectId: s.projectId };
  const [row] = await d
    .select({ id: sessions.id, projectId: sessions.projectId })
    .from(sessions)
    .where(and(eq(sessions.teamId, s.teamId), eq(sessions.sessionKey, s.sessionKey)));
  if (!row) throw new Error('imported session vanished');
  return { id: row.id, created: false, projectId: row.projectId };
}

export interface Scope {
  teamId: number;
  projectId: number;
  sessionId: number;
  authorUserId: number;
}

/** True when the row was new. */
export async function insertPrompt(db: D1Database, s: Scope, p: { promptNumber: number; promptId: string | null; text: string; createdAt: number }): Promise<boolean> {
  const rows = await drizzle(db)
    .insert(prompts)
    .values({ ...s, promptNumber: p.promptNumber, promptId: p.promptId, text: p.text, cjkTerms: cjkTerms(p.text), createdAt: p.createdAt })
    .onConflictDoNothing()
    .returning({ id: prompts.id });
  return rows.length > 0;
}

/** An imported observation: its content plus the bookkeeping the export carried. */
export interface ObservationIn extends ObservationContent {
  promptNumber: number;
  promptId: string | null;
  createdAt: number;
  discoveryTokens: number;
  contentHash: string;
  agentId: string | null;
  agentType: string | null;
  source: string;
}

/** The new row's id, or null when the session already holds this content (through the one observation insert). */
export async function insertObservation(db: D1Database, s: Scope, o: ObservationIn, storedAt: number): Promise<number | null> {
  const d = dbHandle(db);
  const { promptNumber, promptId, createdAt, discoveryTokens, contentHash, agentId, agentType, source } = o;
  const place = { ...s, promptNumber, promptId, createdAt, storedAt, discoveryTokens, contentHash, agentId, agentType, source };
  const [row] = await insertObservationRow(d, place, o);
  if (!row) return null;
  const files: FileRef[] = [
    ...[...new Set(o.filesModified)].map((path) => ({ path, kind: 'modified' as const })),
    ...[...new Set(o.filesRead)].map((path) => ({ path, kind: 'read' as const })),
  ];
  if (files.length > 0) await insertObservationFiles(d, s.sessionId, contentHash, files);
  return row.id;
}

export interface SummaryIn {
  promptNumber: number;
  promptId: string | null;
  request: string;
  investigated: string;
  learned: string;
  completed: string;
  nextSteps: string;
  notes: string | null;
  createdAt: number;
  contentHash: string;
}

export async function insertSummary(db: D1Database, s: Scope, x: SummaryIn): Promise<boolean> {
  const rows = await drizzle(db)
    .insert(summaries)
    .values({ ...s, ...x, cjkTerms: cjkTerms(x.request, x.investigated, x.learned, x.completed, x.nextSteps, x.notes) })
    .onConflictDoNothing()
    .returning({ id: summaries.id });
  return rows.length > 0;
}
