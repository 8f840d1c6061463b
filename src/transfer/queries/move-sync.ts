// What a team move writes on the database the team goes to, beyond the import's one write path: the changes the
// log names (src/transfer/move-delta.ts) made there by key. Rows that changed are set to what they are now on the
// old database; rows gone there go here too, with everything that hangs off them (history, file rows, local
// vectors; their FTS rows go with their delete triggers), so a forget during the copy stays forgotten.
import { and, eq, inArray } from 'drizzle-orm';
import { runBatch, type BatchItem } from '../../db/batch';
import { db, type Db } from '../../db/client';
import { deleteCorrectionRows, putSignalRow } from '../../db/corrections';
import { copyTombstone } from '../../db/forget';
import { putAlias } from '../../db/project-admin';
import {
  localVectors,
  observationFiles,
  observationSignals,
  observations,
  primeTombstones,
  projectAliases,
  projects,
  prompts,
  sessions,
  summaries,
} from '../../db/schema';
import { byIds, inJsonList } from '../../db/sqlite';
import { putObserverUsage } from '../../db/usage';

/** Rows to delete on the target, by their ids there. */
export interface TargetDeletes {
  observations: number[];
  summaries: number[];
  prompts: number[];
  sessions: number[];
  projects: number[];
  aliases: string[];
}

export const noDeletes = (): TargetDeletes => ({
  observations: [],
  summaries: [],
  prompts: [],
  sessions: [],
  projects: [],
  aliases: [],
});

const RECORDS = { observation: observations, summary: summaries, prompt: prompts } as const;

/**
 * The statements that delete `del` from the target, children first, each with what hangs off it; a session or a
 * project takes whatever records are still filed under it. Appended to `items`; `counted` gets the positions of
 * the record deletes (their rows answer how many went).
 */
function deletes(d: Db, teamId: number, del: TargetDeletes, items: BatchItem[], counted: number[]): void {
  const record = (kind: keyof typeof RECORDS, where: ReturnType<typeof and>) => {
    const t = RECORDS[kind];
    const ofThem = d.select({ id: t.id }).from(t).where(where);
    if (kind === 'observation') {
      items.push(...deleteCorrectionRows(d, teamId, ofThem));
      items.push(
        d
          .delete(observationFiles)
          .where(and(eq(observationFiles.teamId, teamId), inArray(observationFiles.observationId, ofThem))),
      );
    }
    items.push(
      d
        .delete(localVectors)
        .where(
          and(eq(localVectors.teamId, teamId), eq(localVectors.kind, kind), inArray(localVectors.recordId, ofThem)),
        ),
    );
    counted.push(items.length);
    items.push(d.delete(t).where(where).returning({ id: t.id }));
  };
  const all = (kind: keyof typeof RECORDS, where: (t: (typeof RECORDS)[typeof kind]) => ReturnType<typeof and>) =>
    record(kind, where(RECORDS[kind]));
  if (del.observations.length)
    record('observation', byIds(observations.id, del.observations, eq(observations.teamId, teamId)));
  if (del.summaries.length) record('summary', byIds(summaries.id, del.summaries, eq(summaries.teamId, teamId)));
  if (del.prompts.length) record('prompt', byIds(prompts.id, del.prompts, eq(prompts.teamId, teamId)));
  if (del.sessions.length) {
    for (const kind of ['observation', 'summary', 'prompt'] as const)
      all(kind, (t) => and(eq(t.teamId, teamId), inJsonList(t.sessionId, del.sessions)));
    items.push(d.delete(sessions).where(and(eq(sessions.teamId, teamId), inJsonList(sessions.id, del.sessions))));
  }
  if (del.aliases.length)
    items.push(
      d
        .delete(projectAliases)
        .where(and(eq(projectAliases.teamId, teamId), inJsonList(projectAliases.key, del.aliases))),
    );
  if (del.projects.length) {
    for (const kind of ['observation', 'summary', 'prompt'] as const)
      all(kind, (t) => and(eq(t.teamId, teamId), inJsonList(t.projectId, del.projects)));
    items.push(
      d.delete(sessions).where(and(eq(sessions.teamId, teamId), inJsonList(sessions.projectId, del.projects))),
      d
        .delete(projectAliases)
        .where(and(eq(projectAliases.teamId, teamId), inJsonList(projectAliases.projectId, del.projects))),
      d
        .delete(primeTombstones)
        .where(and(eq(primeTombstones.teamId, teamId), inJsonList(primeTombstones.projectId, del.projects))),
      d.delete(projects).where(and(eq(projects.teamId, teamId), inJsonList(projects.id, del.projects))),
    );
  }
}

/** Runs `items` as one batch; answers how many records the deletes at `counted` removed. */
async function run(d: Db, items: BatchItem[], counted: number[]): Promise<number> {
  if (items.length === 0) return 0;
  const results = await runBatch(d, items);
  return counted.reduce((n, at) => n + ((results[at] as unknown[] | undefined)?.length ?? 0), 0);
}

/**
 * Deletes `del` from the target in one batch (a key the old database gave to another row since: the target's
 * row goes before the new one is copied). Answers how many records went: the FTS rows they leave in the index's
 * segments ask for an upkeep pass.
 */
export async function deleteOnTarget(d1: D1Database, teamId: number, del: TargetDeletes): Promise<number> {
  const d = db(d1);
  const items: BatchItem[] = [];
  const counted: number[] = [];
  deletes(d, teamId, del, items, counted);
  return run(d, items, counted);
}

// --- rows set to what they are on the old database (ids are the target's) -------------------------------------

type SessionState = Pick<
  typeof sessions.$inferSelect,
  | 'projectId'
  | 'userId'
  | 'platform'
  | 'promptCount'
  | 'startedAt'
  | 'endedAt'
  | 'deadLetters'
  | 'importedAt'
  | 'importedAuthor'
  | 'gitBranch'
  | 'gitCommit'
  | 'retireAfter'
>;

/** What changes on a stored record: its project (a merge), the hold-back's verdict and release, its links. */
export interface RecordState {
  kind: keyof typeof RECORDS;
  id: number;
  projectId: number;
  heldKinds: string | null;
  releasedAt: number | null;
  releasedBy: number | null;
  supersededBy?: number | null;
  mergedInto?: number | null;
}

/** Everything one page of the log sets on the target, besides the records the import wrote. */
export interface SyncPlan {
  projects: { id: number; visibility: 'team' | 'private'; ownerUserId: number | null }[];
  sessions: ({ id: number } & SessionState)[];
  records: RecordState[];
  signals: (typeof observationSignals.$inferInsert)[];
  usage: Parameters<typeof putObserverUsage>[1][];
  aliases: { key: string; projectId: number; createdAt: number }[];
  tombstones: (typeof primeTombstones.$inferInsert)[];
  goneTombstones: { projectId: number; hash: string }[];
}

export const emptyPlan = (): SyncPlan => ({
  projects: [],
  sessions: [],
  records: [],
  signals: [],
  usage: [],
  aliases: [],
  tombstones: [],
  goneTombstones: [],
});

/** The statements setting one record's changing fields; a verdict the target computed is kept when the old row has none. */
function setRecord(d: Db, r: RecordState): BatchItem[] {
  const t = RECORDS[r.kind];
  const set = {
    projectId: r.projectId,
    releasedAt: r.releasedAt,
    releasedBy: r.releasedBy,
    ...(r.heldKinds === null ? {} : { heldKinds: r.heldKinds }),
    ...(r.kind === 'observation' ? { supersededBy: r.supersededBy ?? null, mergedInto: r.mergedInto ?? null } : {}),
  };
  const out: BatchItem[] = [d.update(t).set(set).where(eq(t.id, r.id))];
  if (r.kind === 'observation')
    out.push(
      d.update(observationFiles).set({ projectId: r.projectId }).where(eq(observationFiles.observationId, r.id)),
    );
  return out;
}

/** How many statements `applyOnTarget` sends for `plan` (the page's share of a step's budget). */
export const planStatements = (plan: SyncPlan): number =>
  plan.projects.length +
  plan.sessions.length +
  plan.records.reduce((n, r) => n + (r.kind === 'observation' ? 2 : 1), 0) +
  plan.signals.length +
  plan.usage.length +
  plan.aliases.length +
  plan.tombstones.length +
  plan.goneTombstones.length;

/**
 * Sets what `plan` says and deletes `del` on the target, in one batch (rows set first: a merge's records move
 * to their project before the project they left goes). Answers how many records the deletes removed.
 */
export async function applyOnTarget(
  d1: D1Database,
  teamId: number,
  plan: SyncPlan,
  del: TargetDeletes,
): Promise<number> {
  const d = db(d1);
  const items: BatchItem[] = [
    ...plan.projects.map((p) =>
      d.update(projects).set({ visibility: p.visibility, ownerUserId: p.ownerUserId }).where(eq(projects.id, p.id)),
    ),
    ...plan.sessions.map(({ id, ...s }) => d.update(sessions).set(s).where(eq(sessions.id, id))),
    ...plan.records.flatMap((r) => setRecord(d, r)),
    ...plan.signals.map((r) => putSignalRow(d, r)),
    ...plan.usage.map((r) => putObserverUsage(d, r)),
    ...plan.aliases.map((a) => putAlias(d, teamId, a.key, a.projectId, a.createdAt)),
    ...plan.tombstones.map((t) => copyTombstone(d, t)),
    ...plan.goneTombstones.map((t) =>
      d
        .delete(primeTombstones)
        .where(
          and(
            eq(primeTombstones.teamId, teamId),
            eq(primeTombstones.projectId, t.projectId),
            eq(primeTombstones.hash, t.hash),
          ),
        ),
    ),
  ];
  const counted: number[] = [];
  deletes(d, teamId, del, items, counted);
  return run(d, items, counted);
}
