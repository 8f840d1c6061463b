// What changed while a team move copied (src/transfer/move-job.ts): the copy runs while the team writes, and the
// database it leaves notes every insert, update and delete of the team's rows in its change log (migration 0024).
// The move then applies the log, a page at a time, in rounds: each round takes the entries up to where the log
// stood when it began, and the team's audit rows and history events up to the same moment. Rounds run with the
// team's writes open until what is left is small; the last one runs with writes closed and the old database at
// rest, so the new database ends holding exactly what the old one holds.
//
// A row is known on both databases by its keys (a project's key, a session's key, a record's session key with its
// content hash or prompt number), never by id. Applying an entry makes the target's row of that key what the old
// database's row of that key is now: written if missing, its changing fields set if there (a merge's project, the
// hold-back's verdict, a link), deleted if the old database has no row of that key any more (a forget during the
// copy stays forgotten), deleted first and copied anew if the key now names another row (forgotten, then stored
// again). Applying an entry twice, or an entry already reflected by the copy, changes nothing.
import { toRecord } from './export';
import { importPart, MAX_IMPORT_LINES, numbered } from './import';
import { deletesOf, keysOf, pair, readPage, RECORD_TABLES, type Page, type RecordTable } from './move-delta-page';
import { idsByKeys, type ObservationRowFull, type PromptRowFull, type SummaryRowFull } from './queries/move-rows';
import type { LogEntry } from './queries/move-log';
import {
  applyOnTarget,
  deleteOnTarget,
  emptyPlan,
  type RecordState,
  type SyncPlan,
  type TargetDeletes,
} from './queries/move-sync';
import type { ExportRecord } from './records';
import type { TeamDbs } from '../db/shards';

/** Statements one log entry may cost at most: its record written (2), its fields set (2), what hangs off it. */
export const STATEMENTS_PER_ENTRY = 5;
/** Statements a page costs besides its entries: reads on both databases (the observations' evidence ids one of
 * them), the import's plan, a round's start. */
export const PAGE_OVERHEAD = 35;

const KIND = { prompts: 'prompt', observations: 'observation', summaries: 'summary' } as const;
type RecordRow = PromptRowFull | ObservationRowFull | SummaryRowFull;

/** The page's rows as the import's lines: each record with its session and project (a line the target has is skipped). */
function linesOf(page: Page): ExportRecord[] {
  const { rows, sessionsById, projectsById, who, keyOf, fileIds } = page;
  const lines: ExportRecord[] = [];
  const projectLine = new Set<number>();
  const addProject = (id: number) => {
    const p = projectsById.get(id);
    if (p && !projectLine.has(id)) {
      projectLine.add(id);
      lines.push(toRecord.project(p, who));
    }
  };
  const sessionLine = new Set<number>();
  const addSession = (id: number) => {
    const s = sessionsById.get(id);
    const p = s && projectsById.get(s.projectId);
    if (s && p && !sessionLine.has(id)) {
      addProject(p.id);
      sessionLine.add(id);
      lines.push(toRecord.session(s, p, who));
    }
  };
  for (const p of rows.projects) addProject(p.id);
  for (const s of rows.sessions) addSession(s.id);
  for (const r of rows.prompts) {
    addSession(r.sessionId);
    lines.push(toRecord.prompt(r, keyOf, who));
  }
  for (const o of rows.observations) {
    addSession(o.sessionId);
    lines.push(toRecord.observation(o, keyOf, who, fileIds.get(o.id)));
  }
  for (const s of rows.summaries) {
    addSession(s.sessionId);
    lines.push(toRecord.summary(s, keyOf, who));
  }
  return lines;
}

const recordKey = (page: Page, r: RecordRow, t: RecordTable) => ({
  sessionKey: page.keyOf(r.sessionId),
  key: t === 'prompts' ? String((r as PromptRowFull).promptNumber) : (r as ObservationRowFull).contentHash,
});

/** The target's ids of everything the page sets and of the keys gone from the old database: one read. */
function thereOf(target: D1Database, teamId: number, page: Page) {
  const gone = keysOf(page.fates, 'gone');
  const { rows } = page;
  return idsByKeys(target, teamId, {
    projects: [...[...page.projectsById.values()].map((p) => p.key), ...gone.projects],
    sessions: [...[...page.sessionsById.values()].map((s) => s.sessionKey), ...gone.sessions],
    prompts: [...rows.prompts.map((r) => recordKey(page, r, 'prompts')), ...gone.prompts],
    observations: [
      ...rows.observations.map((r) => recordKey(page, r, 'observations')),
      ...page.links.values(),
      ...gone.observations,
    ],
    summaries: [...rows.summaries.map((r) => recordKey(page, r, 'summaries')), ...gone.summaries],
  });
}

/** What the page sets on the target (rows as the old database holds them now, ids the target's) and deletes there. */
function planOf(page: Page, there: Awaited<ReturnType<typeof idsByKeys>>, teamId: number) {
  const { rows, extras, n } = page;
  const projectThere = (id: number) => {
    const p = page.projectsById.get(id);
    return p ? there.projects.get(p.key) : undefined;
  };
  const sessionThere = (id: number) => {
    const s = page.sessionsById.get(id);
    return s ? there.sessions.get(s.sessionKey) : undefined;
  };
  const observationThere = (id: number | null) => {
    const o = id === null ? undefined : page.links.get(id);
    return o ? there.observations.get(pair(o.sessionKey, o.key))?.id : undefined;
  };
  const plan: SyncPlan = emptyPlan();
  for (const p of rows.projects) {
    const id = there.projects.get(p.key);
    if (id !== undefined) plan.projects.push({ id, visibility: p.visibility, ownerUserId: p.ownerUserId });
  }
  for (const s of rows.sessions) {
    const [id, projectId] = [there.sessions.get(s.sessionKey), projectThere(s.projectId)];
    if (id === undefined || projectId === undefined) continue;
    const { userId, platform, promptCount, startedAt, endedAt, deadLetters, importedAt, importedAuthor } = s;
    plan.sessions.push({
      ...{ id, projectId, userId, platform, promptCount, startedAt, endedAt, deadLetters, importedAt },
      ...{ importedAuthor, gitBranch: s.gitBranch, gitCommit: s.gitCommit, retireAfter: s.retireAfter },
    });
  }
  for (const t of RECORD_TABLES) {
    for (const r of rows[t] as RecordRow[]) {
      const k = recordKey(page, r, t);
      const id = there[t].get(pair(k.sessionKey, k.key))?.id;
      const projectId = projectThere(r.projectId);
      if (id === undefined || projectId === undefined) continue;
      const state: RecordState = { kind: KIND[t], id, projectId, ...held(r) };
      if (t === 'observations') {
        const o = r as ObservationRowFull;
        // A replacement that did not come along leaves the record outdated with nothing in its place (as the copy).
        state.supersededBy = o.supersededBy === null ? null : (observationThere(o.supersededBy) ?? id);
        state.mergedInto = o.mergedInto === null ? null : (observationThere(o.mergedInto) ?? null);
      }
      plan.records.push(state);
    }
  }
  for (const s of extras.signals) {
    const id = observationThere(s.observationId);
    if (id !== undefined) plan.signals.push({ ...s, teamId, observationId: id });
  }
  for (const u of extras.usage) {
    const sessionId = sessionThere(u.sessionId);
    if (sessionId !== undefined) plan.usage.push({ ...u, teamId, sessionId });
  }
  const del: TargetDeletes = deletesOf(there, page.fates, 'gone');
  const aliasesNow = new Map(extras.aliases.map((a) => [a.key, a]));
  for (const key of n.aliases) {
    const a = aliasesNow.get(key);
    const projectId = a && projectThere(a.projectId);
    if (a && projectId !== undefined) plan.aliases.push({ key, projectId, createdAt: a.createdAt });
    else if (!a) del.aliases.push(key);
  }
  const tombstonesNow = new Map(extras.tombstones.map((t) => [`${t.projectId}\u0000${t.hash}`, t]));
  for (const [k, t] of n.tombstones) {
    const projectId = projectThere(t.projectId);
    const row = tombstonesNow.get(k);
    if (projectId === undefined) continue;
    if (row) plan.tombstones.push({ teamId, projectId, hash: t.hash, createdAt: row.createdAt });
    else plan.goneTombstones.push({ projectId, hash: t.hash });
  }
  return { plan, del };
}

const held = (r: RecordRow) => ({ heldKinds: r.heldKinds, releasedAt: r.releasedAt, releasedBy: r.releasedBy });

/**
 * Applies one page of the log (entries in order) from `source` to the target of `h`; answers how many records it
 * deleted there. Reads the old database two or three times and the target once, writes the page's missing rows in
 * the import's batch and everything else in one more (a key given to another row since costs a read and a batch).
 */
export async function applyLogPage(
  source: D1Database,
  h: TeamDbs,
  entries: readonly LogEntry[],
  now: number,
): Promise<number> {
  const page = await readPage(source, h.teamId, entries);
  // A key given to another row since: the target's row goes first, so the new one is copied whole.
  let deleted = 0;
  const resets = keysOf(page.fates, 'reset');
  if (Object.values(resets).some((list) => list.length > 0))
    deleted += await deleteOnTarget(
      h.team,
      h.teamId,
      deletesOf(await idsByKeys(h.team, h.teamId, resets), page.fates, 'reset'),
    );
  // Rows the target lacks, through the import's one write path (a row it has is left as it is).
  const lines = linesOf(page);
  for (let i = 0; i < lines.length; i += MAX_IMPORT_LINES)
    await importPart(h, { kind: 'restore' }, numbered(lines.slice(i, i + MAX_IMPORT_LINES)), now);
  const { plan, del } = planOf(page, await thereOf(h.team, h.teamId, page), h.teamId);
  return deleted + (await applyOnTarget(h.team, h.teamId, plan, del));
}
