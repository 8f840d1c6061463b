// Export and import in D1: pages of a project's rows for the NDJSON export (keyset by id), and idempotent
// writes keyed by what survives a move between teams (handles, project keys, session keys, content hashes).
// Every row goes in through its table's one insert (teams.ts, projects.ts, sessions.ts, observations.ts,
// summaries.ts); what is here only matches imported rows to existing ones.
import { and, asc, eq, gt, isNull } from 'drizzle-orm';
import { db } from './client';
import { findSession } from './forget';
import { insertObservation as insertObservationRow, insertObservationFiles, type FileRef, type ObservationContent } from './observations';
import { insertProject } from './projects';
import { observations, projects, prompts, sessions, summaries, users } from './schema';
import { insertPrompt as insertPromptRow, upsertSession, type NewSessionRow } from './sessions';
import { insertSummary as insertSummaryRow, type SummaryContent } from './summaries';
import { insertUser } from './teams';

export const PAGE = 500;

export async function teamUsers(d1: D1Database, teamId: number) {
  return db(d1).select({ id: users.id, handle: users.handle, role: users.role, createdAt: users.createdAt }).from(users).where(eq(users.teamId, teamId));
}

export async function projectRow(d1: D1Database, teamId: number, projectId: number) {
  const [row] = await db(d1)
    .select({ id: projects.id, key: projects.key, visibility: projects.visibility, ownerUserId: projects.ownerUserId, createdAt: projects.createdAt })
    .from(projects)
    .where(and(eq(projects.teamId, teamId), eq(projects.id, projectId)));
  return row ?? null;
}

/** The tables an export pages through, per project. */
const EXPORTED = { sessions, prompts, observations, summaries } as const;
type Exported = typeof EXPORTED;
export type ExportedTable = keyof Exported;

/** Up to PAGE rows of one project's `table` with ids above `afterId`, by id; soft-deleted rows are left out. */
export async function exportPage<K extends ExportedTable>(d1: D1Database, table: K, teamId: number, projectId: number, afterId: number): Promise<Exported[K]['$inferSelect'][]> {
  const t: Exported[ExportedTable] = EXPORTED[table];
  const live = 'deletedAt' in t ? isNull(t.deletedAt) : undefined;
  const rows = await db(d1)
    .select()
    .from(t)
    .where(and(eq(t.teamId, teamId), eq(t.projectId, projectId), live, gt(t.id, afterId)))
    .orderBy(asc(t.id))
    .limit(PAGE);
  return rows as Exported[K]['$inferSelect'][];
}

// --- import ---------------------------------------------------------------------------------------------

/** A row matched by its key: its id, and whether this import created it. */
export interface Found {
  id: number;
  created: boolean;
}

/** The user with this handle, created as a member (no token, no device) when the team has none. */
export async function userByHandle(d1: D1Database, teamId: number, handle: string, createdAt: number): Promise<Found> {
  const d = db(d1);
  const made = await insertUser(d, { teamId, handle, role: 'member', createdAt }).returning({ id: users.id });
  if (made[0]) return { id: made[0].id, created: true };
  const [row] = await d.select({ id: users.id }).from(users).where(and(eq(users.teamId, teamId), eq(users.handle, handle)));
  if (!row) throw new Error('imported user vanished');
  return { id: row.id, created: false };
}

export async function projectByKey(
  d1: D1Database,
  teamId: number,
  p: { key: string; visibility: 'team' | 'private'; ownerUserId: number | null; createdAt: number },
): Promise<Found> {
  const d = db(d1);
  const made = await insertProject(d, { teamId, ...p }).returning({ id: projects.id });
  if (made[0]) return { id: made[0].id, created: true };
  const [row] = await d.select({ id: projects.id }).from(projects).where(and(eq(projects.teamId, teamId), eq(projects.key, p.key)));
  if (!row) throw new Error('imported project vanished');
  return { id: row.id, created: false };
}

export type SessionIn = Omit<NewSessionRow, 'deviceId'>;

/** Returns the session's id in this team (an existing session of that key is reused as it is). */
export async function sessionByKey(d1: D1Database, s: SessionIn): Promise<Found & { projectId: number }> {
  const existing = await findSession(d1, s.teamId, s.sessionKey);
  if (existing) return { id: existing.id, created: false, projectId: existing.projectId };
  const row = await upsertSession(d1, s);
  return { id: row.id, created: true, projectId: row.projectId };
}

/** Where imported rows of one session are filed, and by whom. */
export interface Scope {
  teamId: number;
  projectId: number;
  sessionId: number;
  authorUserId: number;
}

/** The new row's id; null when it was there already. */
export async function insertPrompt(d1: D1Database, s: Scope, p: { promptNumber: number; promptId: string | null; text: string; createdAt: number }): Promise<number | null> {
  const rows = await insertPromptRow(db(d1), { ...s, ...p }).returning({ id: prompts.id });
  return rows[0]?.id ?? null;
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

/** The new row's id, or null when the session already holds this content. */
export async function insertObservation(d1: D1Database, s: Scope, o: ObservationIn, storedAt: number): Promise<number | null> {
  const d = db(d1);
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

/** An imported summary: its content plus the bookkeeping the export carried. */
export interface SummaryIn extends SummaryContent {
  promptNumber: number;
  promptId: string | null;
  createdAt: number;
  contentHash: string;
}

/** True when the row was new (the session did not hold this content yet). */
/** The new row's id; null when it was there already. */
export async function insertSummary(d1: D1Database, s: Scope, x: SummaryIn): Promise<number | null> {
  const { promptNumber, promptId, createdAt, contentHash, ...content } = x;
  const rows = await insertSummaryRow(db(d1), { ...s, promptNumber, promptId, createdAt, contentHash }, content);
  return rows[0]?.id ?? null;
}
