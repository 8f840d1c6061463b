// The records of a team move, read from the old database in small pieces that a cursor resumes: the team's
// members, then per project its project line, sessions, prompts, observations and summaries (every row, private
// and sensitive ones too: a move takes everything), as the export's records (export.ts, `toRecord`), so that each piece is
// restored on the new database by the import's one write path (importPart, kind `restore`).
import { exportPage, projectRow, teamUsers } from './queries/transfer';
import { pageRecords, toRecord, whoOf } from './export';
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
export async function nextRecords(
  d1: D1Database,
  teamId: number,
  projectIds: readonly number[],
  start: CopyCursor,
  max: number,
): Promise<{ records: ExportRecord[]; cursor: CopyCursor; done: boolean }> {
  const c = { ...start };
  const out: ExportRecord[] = [];
  const people = await teamUsers(d1, teamId);
  const who = whoOf(people);
  if (!c.users) {
    for (const u of people) out.push(toRecord.user(u));
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
      out.push(toRecord.project(p, who));
      Object.assign(c, { t: 1, after: 0 });
      continue;
    }
    const rows = await exportPage(d1, table, teamId, projectId, c.after, max - out.length);
    if (rows.length === 0) {
      Object.assign(c, { t: c.t + 1, after: 0 });
      continue;
    }
    c.after = rows[rows.length - 1]!.id;
    out.push(...(await pageRecords(d1, teamId, table, rows, p, who)));
  }
  return { records: out, cursor: c, done: c.p >= projectIds.length };
}
