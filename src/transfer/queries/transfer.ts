// Export and import in D1: pages of a project's rows for the NDJSON export (keyset by id); for import, the
// lookups an import part is planned from (sessions by key, the rows a part would repeat, members by handle)
// and the statements that write a planned part (an import piece) in ONE batch (all or nothing). Every row goes in through its
// table's one insert (teams.ts, projects.ts, sessions.ts, observations.ts, summaries.ts, audit.ts); which rows
// and where is the write policy's (write-policy.ts) and the planner's (src/transfer/import-plan.ts).
import { and, asc, eq, gt, isNull, type SQL } from 'drizzle-orm';
import { tallied, type RedactionTally } from '#shared/redact';
import { insertAudit, redactionAudit, type AuditEntry } from '../../db/audit';
import { runBatch, type BatchItem } from '../../db/batch';
import { db, type Db } from '../../db/client';
import { insertObservation as insertObservationRow, insertObservationFiles, type FileRef } from '../../db/observations';
import type { ObservationContent } from '#shared/wire/records';
import { insertProject } from '../../db/projects';
import {
  observationFiles as observationFileTable,
  observations,
  projects,
  prompts,
  sessions,
  summaries,
  users,
} from '../../db/schema';
import { insertPrompt as insertPromptRow, sessionUpsert, type NewSessionRow } from '../../db/sessions';
import { inJsonList, projectIdByKey, projectOfSession, sessionIdByKey } from '../../db/sqlite';
import type { SummaryContent } from '#shared/wire/records';
import { insertSummary as insertSummaryRow } from '../../db/summaries';
import { insertUser } from '../../db/teams';
import type { FileIdsOut } from './file-ids';

export const PAGE = 500;

export async function teamUsers(d1: D1Database, teamId: number) {
  return db(d1)
    .select({ id: users.id, handle: users.handle, role: users.role, createdAt: users.createdAt })
    .from(users)
    .where(eq(users.teamId, teamId));
}

export async function projectRow(d1: D1Database, teamId: number, projectId: number) {
  const [row] = await db(d1)
    .select({
      id: projects.id,
      key: projects.key,
      visibility: projects.visibility,
      ownerUserId: projects.ownerUserId,
      createdAt: projects.createdAt,
    })
    .from(projects)
    .where(and(eq(projects.teamId, teamId), eq(projects.id, projectId)));
  return row ?? null;
}

/** The tables an export pages through, per project. */
const EXPORTED = { sessions, prompts, observations, summaries } as const;
type Exported = typeof EXPORTED;
export type ExportedTable = keyof Exported;

/** Up to PAGE rows of one project's `table` with ids above `afterId`, by id; soft-deleted rows are left out. */
export async function exportPage<K extends ExportedTable>(
  d1: D1Database,
  table: K,
  teamId: number,
  projectId: number,
  afterId: number,
  limit = PAGE,
): Promise<Exported[K]['$inferSelect'][]> {
  const t: Exported[ExportedTable] = EXPORTED[table];
  const live = 'deletedAt' in t ? isNull(t.deletedAt) : undefined;
  const rows = await db(d1)
    .select()
    .from(t)
    .where(and(eq(t.teamId, teamId), eq(t.projectId, projectId), live, gt(t.id, afterId)))
    .orderBy(asc(t.id))
    .limit(limit);
  return rows as Exported[K]['$inferSelect'][];
}

// --- import: lookups ------------------------------------------------------------------------------------

/** A session found by key, with its project's access (the write policy reads both). */
export interface KeyedSession {
  id: number;
  key: string;
  userId: number;
  projectId: number;
  importedAt: number | null;
  visibility: 'team' | 'private';
  ownerUserId: number | null;
}

/** The team's sessions named by `keys`, by key; the keys bound as one JSON parameter. */
export async function sessionsByKeys(
  d1: D1Database,
  teamId: number,
  keys: readonly string[],
): Promise<Map<string, KeyedSession>> {
  const out = new Map<string, KeyedSession>();
  if (keys.length === 0) return out;
  const rows = await db(d1)
    .select({
      id: sessions.id,
      key: sessions.sessionKey,
      userId: sessions.userId,
      projectId: sessions.projectId,
      importedAt: sessions.importedAt,
      visibility: projects.visibility,
      ownerUserId: projects.ownerUserId,
    })
    .from(sessions)
    .innerJoin(projects, eq(projects.id, sessions.projectId))
    .where(and(eq(sessions.teamId, teamId), inJsonList(sessions.sessionKey, keys)));
  for (const r of rows) out.set(r.key, r);
  return out;
}

/** What existing sessions already hold of a part: `session:hash` of observations and summaries, `session:number` of prompts. */
export async function heldRows(
  d1: D1Database,
  sessionIds: readonly number[],
  hashes: readonly string[],
  numbers: readonly number[],
) {
  const held = { observations: new Set<string>(), summaries: new Set<string>(), prompts: new Set<string>() };
  if (sessionIds.length === 0) return held;
  const d = db(d1);
  const [o, s, p] = await d.batch([
    d
      .select({ s: observations.sessionId, k: observations.contentHash })
      .from(observations)
      .where(
        and(
          inJsonList(observations.sessionId, sessionIds),
          inJsonList(observations.contentHash, hashes.length ? hashes : ['']),
        ),
      ),
    d
      .select({ s: summaries.sessionId, k: summaries.contentHash })
      .from(summaries)
      .where(
        and(
          inJsonList(summaries.sessionId, sessionIds),
          inJsonList(summaries.contentHash, hashes.length ? hashes : ['']),
        ),
      ),
    d
      .select({ s: prompts.sessionId, k: prompts.promptNumber })
      .from(prompts)
      .where(
        and(
          inJsonList(prompts.sessionId, sessionIds),
          inJsonList(prompts.promptNumber, numbers.length ? numbers : [-1]),
        ),
      ),
  ]);
  for (const r of o) held.observations.add(`${r.s}:${r.k}`);
  for (const r of s) held.summaries.add(`${r.s}:${r.k}`);
  for (const r of p) held.prompts.add(`${r.s}:${r.k}`);
  return held;
}

/** Session keys by row id (a team move's records name their sessions by key). */
export async function sessionKeysByIds(
  d1: D1Database,
  teamId: number,
  ids: readonly number[],
): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db(d1)
    .select({ id: sessions.id, key: sessions.sessionKey })
    .from(sessions)
    .where(and(eq(sessions.teamId, teamId), inJsonList(sessions.id, ids)));
  return new Map(rows.map((r) => [r.id, r.key]));
}

/** Ids of the team's members by handle. */
export async function memberIds(d1: D1Database, teamId: number): Promise<Map<string, number>> {
  const rows = await db(d1).select({ id: users.id, handle: users.handle }).from(users).where(eq(users.teamId, teamId));
  return new Map(rows.map((r) => [r.handle, r.id]));
}

/** Makes the members `handles` names that the team lacks (no token, no device); answers how many were new. */
export async function addMissingMembers(
  d1: D1Database,
  teamId: number,
  handles: ReadonlyMap<string, { role: 'owner' | 'admin' | 'member' | 'reader'; createdAt: number }>,
): Promise<number> {
  const d = db(d1);
  const known = await memberIds(d1, teamId);
  const missing = [...handles].filter(([h]) => !known.has(h));
  const made = await runBatch(
    d,
    missing.map(([handle, u]) =>
      insertUser(d, { teamId, handle, role: u.role, createdAt: u.createdAt }).returning({ id: users.id }),
    ),
  );
  return made.filter((r) => Array.isArray(r) && r.length > 0).length;
}

// --- import: the statements of one part -------------------------------------------------------------------

/** How a planned row names its session: by id when it exists, else by key (made earlier in the same batch). */
export type SessionRef = { id: number } | { key: string; userId: number | null };

/**
 * The session's id as a value. By key it is looked up in the batch itself, and with a user only that user's
 * imported session answers: if the key changed hands since the part was planned, the id is NULL, the NOT NULL
 * column refuses it and the whole batch rolls back.
 */
export const sessionIdOf = (teamId: number, s: SessionRef): number | SQL<number> =>
  'id' in s ? s.id : sessionIdByKey(teamId, s.key, s.userId);

/** A project to make: stored key, visibility, owner. */
export interface NewProject {
  key: string;
  visibility: 'team' | 'private';
  ownerUserId: number | null;
  createdAt: number;
}

/** A session to make, its project named by id or by stored key (made earlier in the batch). */
export type NewSession = Omit<NewSessionRow, 'teamId' | 'projectId'> & {
  project: { id: number } | { key: string; writer: number | null };
};

/** Bookkeeping every imported row carries. */
export interface RowBase {
  session: SessionRef;
  promptNumber: number;
  promptId: string | null;
  createdAt: number;
  authorUserId: number;
  importedAuthor: string | null;
  /** A held row an admin released (a restore carries it; an admin's import never does). */
  releasedAt: number | null;
  releasedBy: number | null;
}

/** An imported observation: its content plus the bookkeeping the export carried. */
export interface ObservationIn extends ObservationContent, RowBase {
  discoveryTokens: number;
  contentHash: string;
  agentId: string | null;
  agentType: string | null;
  source: string;
  gitBranch: string | null;
  gitCommit: string | null;
  /** Evidence ids by path (an export's `file_ids`), given to the file rows written; absent: none known. */
  fileIds?: ReadonlyMap<string, FileIdsOut>;
}

export interface SummaryIn extends SummaryContent, RowBase {
  contentHash: string;
}

export interface PromptIn extends RowBase {
  text: string;
}

/** One planned part, ready to write. */
export interface PartWrites {
  teamId: number;
  projects: NewProject[];
  sessions: NewSession[];
  prompts: PromptIn[];
  observations: ObservationIn[];
  summaries: SummaryIn[];
  /** The part's audit row (an admin's import); none for an operator's restore. */
  audit: AuditEntry | null;
  storedAt: number;
}

/** Ids of the rows the batch made, to be embedded. */
export interface PartIds {
  observations: number[];
  summaries: number[];
  prompts: number[];
}

/** How many statements `writePart` sends for `w`: the planner keeps a part under D1's per-invocation budget. */
export const partStatements = (w: Omit<PartWrites, 'teamId' | 'audit' | 'storedAt'> & { audit: unknown }): number =>
  w.projects.length +
  w.sessions.length +
  w.prompts.length +
  w.summaries.length +
  (w.audit ? 1 : 0) +
  w.observations.reduce((n, o) => n + 1 + (o.filesRead.length + o.filesModified.length > 0 ? 1 : 0), 0);

/**
 * Writes a planned part in ONE D1 batch (a transaction: all of it or none of it) and answers the new rows' ids.
 * Rows name their session and project through it, so sessions and projects made in the same batch are found.
 * `after`: the caller's statements at the batch's end (an import's history lines, queries/history.ts).
 */
export async function writePart(
  d1: D1Database,
  w: PartWrites,
  after: (d: Db) => BatchItem[] = () => [],
): Promise<PartIds> {
  const d = db(d1);
  const t = w.teamId;
  const queries: BatchItem[] = [];
  const slots: { kind: keyof PartIds; at: number }[] = [];
  for (const p of w.projects) queries.push(insertProject(d, { teamId: t, ...p }));
  for (const s of w.sessions) {
    const { project, ...row } = s;
    const projectId = 'id' in project ? project.id : projectIdByKey(t, project.key, project.writer);
    queries.push(sessionUpsert(d, { ...row, teamId: t, projectId }));
  }
  const place = (r: RowBase) => {
    const sessionId = sessionIdOf(t, r.session);
    return {
      teamId: t,
      sessionId,
      projectId: projectOfSession(sessionId),
      promptNumber: r.promptNumber,
      promptId: r.promptId,
      createdAt: r.createdAt,
      authorUserId: r.authorUserId,
      importedAuthor: r.importedAuthor,
      releasedAt: r.releasedAt,
      releasedBy: r.releasedBy,
    };
  };
  // Secrets in the file are stored redacted and counted by kind in the part's audit row.
  const tally: RedactionTally = {};
  for (const p of w.prompts) {
    slots.push({ kind: 'prompts', at: queries.length });
    queries.push(insertPromptRow(d, { ...place(p), text: p.text }, tally).returning({ id: prompts.id }));
  }
  for (const o of w.observations) {
    const at = place(o);
    slots.push({ kind: 'observations', at: queries.length });
    const { discoveryTokens, contentHash, agentId, agentType, source, gitBranch, gitCommit } = o;
    queries.push(
      insertObservationRow(
        d,
        { ...at, storedAt: w.storedAt, discoveryTokens, contentHash, agentId, agentType, source, gitBranch, gitCommit },
        o,
        tally,
      ),
    );
    const files = observationFiles(o);
    if (files.length) queries.push(insertObservationFiles(d, at.sessionId, contentHash, files));
  }
  for (const s of w.summaries) {
    const { contentHash, request, investigated, learned, completed, nextSteps, notes } = s;
    slots.push({ kind: 'summaries', at: queries.length });
    queries.push(
      insertSummaryRow(
        d,
        { ...place(s), contentHash },
        { request, investigated, learned, completed, nextSteps, notes },
        tally,
      ),
    );
  }
  // At most one audit row either way, as partStatements counts it.
  if (w.audit)
    queries.push(
      insertAudit(d, tallied(tally) ? { ...w.audit, detail: { ...w.audit.detail, redactions: tally } } : w.audit),
    );
  else if (tallied(tally)) queries.push(insertAudit(d, redactionAudit(t, null, 'import', tally, w.storedAt)));
  queries.push(...after(d));
  const results = await runBatch(d, queries);
  const ids: PartIds = { observations: [], summaries: [], prompts: [] };
  for (const { kind, at } of slots) {
    const rows = results[at] as { id: number }[] | undefined;
    if (rows?.[0]) ids[kind].push(rows[0].id);
  }
  return ids;
}

/** The observation's file rows, each with the ids the line carried for its path (`base` only on a modified row,
 * as ingest writes them: src/store/turn-store.ts `fileRows`). */
const observationFiles = (o: ObservationIn): FileRef[] => {
  const row = (path: string, kind: 'read' | 'modified'): FileRef => {
    const id = o.fileIds?.get(path);
    if (!id) return { path, kind };
    return { path, kind, blob: id.blob, ws: id.ws, ...(kind === 'modified' ? { base: id.base } : {}) };
  };
  return [
    ...[...new Set(o.filesModified)].map((path) => row(path, 'modified')),
    ...[...new Set(o.filesRead)].map((path) => row(path, 'read')),
  ];
};

// --- export by cursor (the backup job) ------------------------------------------------------------------

/** The team's first project with an id above `afterId` (every project, private ones included), or null. */
export async function nextProjectId(d1: D1Database, teamId: number, afterId: number): Promise<number | null> {
  const [row] = await db(d1)
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.teamId, teamId), gt(projects.id, afterId)))
    .orderBy(asc(projects.id))
    .limit(1);
  return row?.id ?? null;
}
