// The records of a team move, read from the old database in small pieces that a cursor resumes: the team's
// members, then per project its project line, sessions, prompts, observations and summaries (every row, private
// and sensitive ones too: a move takes everything), in the export's shapes (records.ts), so that each piece is
// restored on the new database by the import's one write path (importPart, kind `restore`).
import { exportPage, projectRow, sessionKeysByIds, teamUsers } from '../db/transfer';
import { jsonList } from '../lib/json-list';
import type { ExportRecord } from './records';

/** Where the copy is: members sent, the project (index into the move's list), the table, the last id sent. */
export interface CopyCursor {
  users: boolean;
  p: number;
  /** 0: the project line, 1 sessions, 2 prompts, 3 observations, 4 summaries. */
  t: number;
  after: number;
}

export const COPY_START: CopyCursor = { users: false, p: 0, t: 0, after: 0 };

const TABLES = [null, 'sessions', 'prompts', 'observations', 'summaries'] as const;

/** Up to `max` records from `cursor` on, and the cursor after them (`done` when the team has no more). */
export async function nextRecords(d1: D1Database, teamId: number, projectIds: readonly number[], start: CopyCursor, max: number): Promise<{ records: ExportRecord[]; cursor: CopyCursor; done: boolean }> {
  const c = { ...start };
  const out: ExportRecord[] = [];
  const people = await teamUsers(d1, teamId);
  const handle = new Map(people.map((u) => [u.id, u.handle]));
  const who = (id: number | null) => (id === null ? null : (handle.get(id) ?? `user-${id}`));
  if (!c.users) {
    for (const u of people) out.push({ kind: 'user', handle: u.handle, role: u.role, created_at: u.createdAt });
    c.users = true;
  }
  while (out.length < max && c.p < projectIds.length) {
    const projectId = projectIds[c.p]!;
    const p = await projectRow(d1, teamId, projectId);
    if (!p) {
      Object.assign(c, { p: c.p + 1, t: 0, after: 0 });
      continue;
    }
    const table = TABLES[c.t];
    if (table === undefined) {
      Object.assign(c, { p: c.p + 1, t: 0, after: 0 });
      continue;
    }
    if (table === null) {
      out.push({ kind: 'project', key: p.key, visibility: p.visibility, owner: who(p.ownerUserId), created_at: p.createdAt });
      Object.assign(c, { t: 1, after: 0 });
      continue;
    }
    const rows = await exportPage(d1, table, teamId, projectId, c.after, max - out.length);
    if (rows.length === 0) {
      Object.assign(c, { t: c.t + 1, after: 0 });
      continue;
    }
    c.after = rows[rows.length - 1]!.id;
    if (table === 'sessions') {
      for (const s of rows as Awaited<ReturnType<typeof exportPage<'sessions'>>>) {
        out.push({
          kind: 'session', session_key: s.sessionKey, project: p.key, user: who(s.userId)!, platform: s.platform,
          prompt_count: s.promptCount, started_at: s.startedAt, ended_at: s.endedAt,
        });
      }
      continue;
    }
    const keys = await sessionKeysByIds(d1, teamId, [...new Set(rows.map((r) => (r as { sessionId: number }).sessionId))]);
    const base = (r: { sessionId: number; promptNumber: number; promptId: string | null; authorUserId: number; createdAt: number }) => ({
      session_key: keys.get(r.sessionId) ?? `session-${r.sessionId}`,
      prompt_number: r.promptNumber,
      prompt_id: r.promptId,
      author: who(r.authorUserId)!,
      created_at: r.createdAt,
    });
    if (table === 'prompts') for (const r of rows as Awaited<ReturnType<typeof exportPage<'prompts'>>>) out.push({ kind: 'prompt', ...base(r), text: r.text });
    else if (table === 'observations') {
      for (const o of rows as Awaited<ReturnType<typeof exportPage<'observations'>>>) {
        out.push({
          kind: 'observation', ...base(o), type: o.type, title: o.title, subtitle: o.subtitle, facts: jsonList(o.facts), narrative: o.narrative,
          concepts: jsonList(o.concepts), files_read: jsonList(o.filesRead), files_modified: jsonList(o.filesModified), discovery_tokens: o.discoveryTokens,
          content_hash: o.contentHash, agent_id: o.agentId, agent_type: o.agentType, source: o.source,
        });
      }
    } else {
      for (const s of rows as Awaited<ReturnType<typeof exportPage<'summaries'>>>) {
        out.push({
          kind: 'summary', ...base(s), request: s.request, investigated: s.investigated, learned: s.learned, completed: s.completed,
          next_steps: s.nextSteps, notes: s.notes, content_hash: s.contentHash,
        });
      }
    }
  }
  return { records: out, cursor: c, done: c.p >= projectIds.length };
}
