// The team export in resumable pages: each call reads ONE page (at most PAGE rows, four statements) from a small JSON
// cursor and answers the cursor to go on from, so a job (the backup) can spread a team of any size over many
// bounded steps and survive a restart between any two, and a client (GET /api/admin/export?cursor=…,
// export-resume.ts) can read it over many bounded requests and resume after a cut connection. Projects are followed by id, not by position, so a project
// made or deleted meanwhile shifts nothing; rows made after their page was read are in the next backup.
import { exportPage, nextProjectId, PAGE, projectRow, teamUsers, type ExportedTable } from './queries/transfer';
import { pageRecords, toRecord, whoOf, type ExportFilter, type Who } from './export';
import { exportedBy, historyPage, HISTORY_STAGES, type HistoryStage } from './history';
import type { ExportRecord } from './records';

const STAGES = ['sessions', 'prompts', 'observations', 'summaries'] as const satisfies readonly ExportedTable[];
type Stage = (typeof STAGES)[number];

export type ExportCursor =
  | { at: 'users' }
  | { at: 'project'; after: number }
  | { at: Stage; project: number; after: number }
  | { at: HistoryStage; after: number }
  | { at: 'done' };

export const exportStart = (): ExportCursor => ({ at: 'users' });

/** A page: its records, and for a row's record the cursor that goes on right after it (a caller may stop there). */
export interface ExportPage {
  records: ExportRecord[];
  /** `resume[i]`: the cursor after `records[i]`, or null where the page cannot be cut (the users). */
  resume: (ExportCursor | null)[];
  next: ExportCursor;
}

/** What one step keeps between pages (read once a step: the team's handles). */
export interface ExportPager {
  page(cursor: ExportCursor): Promise<ExportPage>;
}

/**
 * Pages of team `teamId`'s export on `d1`; `keep` filters prompts, observations and summaries (a reader's export:
 * `readerFilter`). `projects`, when given, lists the project ids the export covers (sorted or not): the others are
 * passed over wherever a cursor names them, so a cursor a client sends back cannot reach a project it may not read.
 */
export async function exportPager(
  d1: D1Database,
  teamId: number,
  keep: ExportFilter,
  projects?: readonly number[],
): Promise<ExportPager> {
  const allowed = projects ? [...new Set(projects)].sort((a, b) => a - b) : null;
  const nextProject = async (after: number): Promise<number | null> =>
    allowed ? (allowed.find((id) => id > after) ?? null) : nextProjectId(d1, teamId, after);
  const covered = (id: number) => allowed === null || allowed.includes(id);
  const people = await teamUsers(d1, teamId);
  const who: Who = whoOf(people);
  const rowsOf = new Map<number, Awaited<ReturnType<typeof projectRow>>>();
  const project = async (id: number) => {
    if (!covered(id)) return null;
    if (!rowsOf.has(id)) rowsOf.set(id, await projectRow(d1, teamId, id));
    return rowsOf.get(id) ?? null;
  };
  const pager = {
    async page(c: ExportCursor): Promise<{ records: ExportRecord[]; next: ExportCursor; ids?: number[] }> {
      switch (c.at) {
        case 'done':
          return { records: [], next: c };
        case 'users':
          return { records: people.map(toRecord.user), next: { at: 'project', after: 0 } };
        case 'project': {
          const id = await nextProject(c.after);
          if (id === null) return { records: [], next: { at: HISTORY_STAGES[0], after: 0 } };
          const p = await project(id);
          // Deleted between the two reads: go on with the next one.
          if (!p) return { records: [], next: { at: 'project', after: id } };
          return { records: [toRecord.project(p, who)], next: { at: 'sessions', project: id, after: 0 } };
        }
        case 'links':
        case 'events':
        case 'signals':
        case 'tombstones': {
          // The correction history, after every project's rows: a line names only observations (and projects) this
          // export holds.
          const h = await historyPage(d1, teamId, c.at, c.after, PAGE, exportedBy(keep, covered), who, covered);
          const i = HISTORY_STAGES.indexOf(c.at);
          const next: ExportCursor =
            h.after !== null
              ? { at: c.at, after: h.after }
              : i + 1 < HISTORY_STAGES.length
                ? { at: HISTORY_STAGES[i + 1]!, after: 0 }
                : { at: 'done' };
          return { records: h.records, next, ids: h.rowIds };
        }
        default: {
          const p = await project(c.project);
          const rows = p ? await exportPage(d1, c.at, teamId, c.project, c.after) : [];
          const i = STAGES.indexOf(c.at);
          const stageDone: ExportCursor =
            i + 1 < STAGES.length
              ? { at: STAGES[i + 1]!, project: c.project, after: 0 }
              : { at: 'project', after: c.project };
          if (!p || rows.length === 0) return { records: [], next: stageDone };
          // A short page is the stage's last: the next stage follows without reading an empty page first.
          const next: ExportCursor = rows.length < PAGE ? stageDone : { ...c, after: rows[rows.length - 1]!.id };
          const kept =
            c.at === 'sessions'
              ? rows
              : (rows as Awaited<ReturnType<typeof exportPage<'prompts' | 'observations' | 'summaries'>>>).filter((r) =>
                  keep(r),
                );
          return { records: await pageRecords(d1, teamId, c.at, kept, p, who), next, ids: kept.map((r) => r.id) };
        }
      }
    },
  };
  return {
    async page(c) {
      const { records, next, ids } = await pager.page(c);
      const at = c.at;
      const resume = records.map((_, i): ExportCursor | null => {
        if (i === records.length - 1) return next;
        if (ids === undefined || at === 'users' || at === 'project' || at === 'done') return null;
        // History records of one source row (a link and a merge, an observation's events) go together.
        if (isHistoryStage(at)) return ids[i + 1] === ids[i] ? null : { at, after: ids[i]! };
        return { at, project: (c as { project: number }).project, after: ids[i]! };
      });
      return { records, resume, next };
    },
  };
}

export const isHistoryStage = (at: string): at is HistoryStage => (HISTORY_STAGES as readonly string[]).includes(at);

/** The whole export from the start as one sequence of records (the plain GET /api/admin/export; a small team's). */
export async function* exportRecords(
  d1: D1Database,
  teamId: number,
  projectIds: readonly number[],
  keep: ExportFilter,
): AsyncGenerator<ExportRecord> {
  const pager = await exportPager(d1, teamId, keep, projectIds);
  for (let c = exportStart(); c.at !== 'done'; ) {
    const page = await pager.page(c);
    yield* page.records;
    c = page.next;
  }
}
