// The correction history in the export and the import (issue 27): which records are superseded or merged and
// into what, their event rows and their signals (feedback counts, review state), as `link`, `event` and `signal`
// lines after every project's rows. An observation is named by its session's key and content hash, as a team
// move translates ids (src/transfer/queries/move-extras.ts), so the lines keep their meaning in another team. A reader's export
// carries a line only when every observation it names is in that export; an admin's import writes a line only
// onto the caller's own rows (the policy's sessions, the caller as author, checked in the batch itself).
import { redact } from '#shared/redact';
import { parseChanges, type FieldValue } from '../versions/model';
import type { Caller } from '../db/caller';
import { sessionsByKeys, type NewSession, type SessionRef } from './queries/transfer';
import { projectsByKeys } from '../db/projects';
import {
  chooseFoundProject,
  importedProjectKey,
  importedSessionKey,
  importSessionKey,
  mayImportIntoSession,
  mayWriteProject,
  projectLookupKeys,
} from '../db/write-policy';
import type { ExportFilter, Who } from './export';
import {
  eventPage,
  historyEnds,
  linkPage,
  signalPage,
  tombstonePage,
  type HistoryEnd,
  type HistoryIn,
  type ObservationRef,
} from './queries/history';
import type { ExportRecord } from './records';

export const HISTORY_STAGES = ['links', 'events', 'signals', 'tombstones'] as const;
export type HistoryStage = (typeof HISTORY_STAGES)[number];

/** One page of a history stage: its records, the source row each came from (for resuming), and where it ends. */
export interface HistoryPage {
  records: ExportRecord[];
  rowIds: number[];
  /** The id to go on after, or null when the stage is done. */
  after: number | null;
}

const named = (e: HistoryEnd) => ({ session_key: e.sessionKey, content_hash: e.contentHash });

/**
 * A page of `stage` from row `after` on. `exported(end)`: whether the export holds that observation (the
 * reader's filter and the covered projects); `covered(projectId)`: whether it covers that project.
 */
export async function historyPage(
  d1: D1Database,
  teamId: number,
  stage: HistoryStage,
  after: number,
  limit: number,
  exported: (e: HistoryEnd) => boolean,
  who: Who,
  covered: (projectId: number) => boolean,
): Promise<HistoryPage> {
  const out: HistoryPage = { records: [], rowIds: [], after: null };
  if (stage === 'tombstones') {
    // A forgotten primed note stays forgotten where the file is imported: its hash, never its text.
    const rows = await tombstonePage(d1, teamId, after, limit);
    for (const r of rows) {
      if (!covered(r.projectId)) continue;
      out.records.push({ kind: 'tombstone', project: r.project, hash: r.hash, created_at: r.createdAt });
      out.rowIds.push(r.row);
    }
    out.after = rows.length < limit ? null : rows[rows.length - 1]!.row;
    return out;
  }
  const ends = async (ids: number[]) => {
    const m = await historyEnds(d1, teamId, [...new Set(ids)]);
    return (id: number | null) => {
      const e = id === null ? undefined : m.get(id);
      return e && exported(e) ? e : undefined;
    };
  };
  if (stage === 'links') {
    const rows = await linkPage(d1, teamId, after, limit);
    const end = await ends(rows.flatMap((r) => [r.id, r.supersededBy ?? r.id, r.mergedInto ?? r.id]));
    for (const r of rows) {
      const from = end(r.id);
      if (!from) continue;
      // A replacement this export leaves out still marks the record outdated (superseded by itself).
      const replaced = r.supersededBy === null ? undefined : (end(r.supersededBy) ?? from);
      for (const [link, to] of [
        ['superseded_by', replaced],
        ['merged_into', end(r.mergedInto)],
      ] as const) {
        if (!to) continue;
        out.records.push({
          kind: 'link',
          link,
          ...named(from),
          to_session_key: to.sessionKey,
          to_content_hash: to.contentHash,
        });
        out.rowIds.push(r.id);
      }
    }
    out.after = rows.length < limit ? null : rows[rows.length - 1]!.id;
    return out;
  }
  if (stage === 'events') {
    const page = await eventPage(d1, teamId, after, limit);
    // A full page leaves its last observation's rows to the next one (identical rows are counted together),
    // unless that observation fills the page alone.
    const last = page[page.length - 1]?.observationId;
    const whole = page.length < limit ? page : page.filter((r) => r.observationId !== last);
    const rows = whole.length ? whole : page;
    const end = await ends(rows.flatMap((r) => [r.observationId, r.byObservationId ?? r.observationId]));
    const grouped = new Map<string, { record: Extract<ExportRecord, { kind: 'event' }>; id: number }>();
    for (const r of rows) {
      const of = end(r.observationId);
      if (!of) continue;
      const by = end(r.byObservationId);
      const record = {
        kind: 'event' as const,
        ...named(of),
        action: r.action,
        by_session_key: by?.sessionKey ?? null,
        by_content_hash: by?.contentHash ?? null,
        actor_user: who(r.actorUserId),
        actor: r.actor,
        reason: r.reason,
        created_at: r.createdAt,
        count: 1,
        changes: r.changes === null ? null : (JSON.parse(r.changes) as Record<string, { from: unknown; to: unknown }>),
      };
      const k = JSON.stringify({ ...record, id: r.observationId });
      const seen = grouped.get(k);
      if (seen) seen.record.count++;
      else grouped.set(k, { record, id: r.observationId });
    }
    for (const g of grouped.values()) {
      out.records.push(g.record);
      out.rowIds.push(g.id);
    }
    out.after = page.length < limit ? null : rows[rows.length - 1]!.observationId;
    return out;
  }
  const rows = await signalPage(d1, teamId, after, limit);
  const end = await ends(rows.map((r) => r.observationId));
  for (const r of rows) {
    const of = end(r.observationId);
    if (!of) continue;
    out.records.push({
      kind: 'signal',
      ...named(of),
      fetched: r.fetched,
      useful: r.useful,
      wrong: r.wrong,
      outdated: r.outdated,
      review: r.review === 'pending' || r.review === 'kept' || r.review === 'promoted' ? r.review : null,
      updated_at: r.updatedAt,
    });
    out.rowIds.push(r.observationId);
  }
  out.after = rows.length < limit ? null : rows[rows.length - 1]!.observationId;
  return out;
}

/** Whether an export with `keep` and these covered projects (null: all) holds an observation. */
export const exportedBy =
  (keep: ExportFilter, covered: (projectId: number) => boolean) =>
  (e: HistoryEnd): boolean =>
    covered(e.projectId) && keep(e);

// --- import ----------------------------------------------------------------------------------------------

type HistoryRecord = Extract<ExportRecord, { kind: 'link' | 'event' | 'signal' | 'tombstone' }>;
type ObservationLine = Exclude<HistoryRecord, { kind: 'tombstone' }>;
type TombstoneLine = Extract<HistoryRecord, { kind: 'tombstone' }>;
type ProjectTarget = NewSession['project'];

/**
 * An edit's `changes` as the import stores them: only the record's text fields, each value as the one insert
 * stores text (redacted; lists of strings), or null when nothing is left (src/versions/model.ts reads them).
 */
function importedChanges(raw: Record<string, { from: unknown; to: unknown }> | null | undefined): string | null {
  if (!raw) return null;
  const parsed = parseChanges(JSON.stringify(raw));
  if (!parsed) return null;
  const clean = (v: FieldValue): FieldValue =>
    v === null ? null : Array.isArray(v) ? v.map((x) => redact(x)) : redact(v);
  const out: Record<string, { from: FieldValue; to: FieldValue }> = {};
  for (const [f, c] of Object.entries(parsed)) out[f] = { from: clean(c.from), to: clean(c.to) };
  return Object.keys(out).length ? JSON.stringify(out) : null;
}

export const isHistory = (r: ExportRecord): r is HistoryRecord =>
  r.kind === 'link' || r.kind === 'event' || r.kind === 'signal' || r.kind === 'tombstone';

/**
 * The project each tombstone line goes into: the one this part resolved for that key (`targets`), else for a
 * restore the key itself (looked up in the batch), else for a member the project the write policy would use for
 * the key (chooseProject), if it exists. A tombstone never makes a project, and a line with no project is dropped.
 */
async function tombstoneTargets(
  h: { team: D1Database; teamId: number },
  caller: Caller | null,
  lines: readonly TombstoneLine[],
  targets: ReadonlyMap<string, ProjectTarget>,
): Promise<HistoryIn[]> {
  const missing = [...new Set(lines.map((r) => r.project))].filter((raw) => !targets.has(raw));
  const resolved = new Map(targets);
  if (caller) {
    const stored = new Map(missing.map((raw) => [raw, importedProjectKey(raw, caller.handle)]));
    const keys = [...stored.values()].flatMap((k) => projectLookupKeys(k, caller.handle));
    const found = await projectsByKeys(h.team, h.teamId, keys);
    for (const [raw, key] of stored) {
      const choice = chooseFoundProject(caller, key, found, 'team');
      if (choice.kind === 'use') resolved.set(raw, { id: choice.project.id });
    }
  } else for (const raw of missing) resolved.set(raw, { key: raw, writer: null });
  return lines.flatMap((r): HistoryIn[] => {
    const project = resolved.get(r.project);
    return project ? [{ kind: 'tombstone', project, hash: r.hash, createdAt: r.created_at }] : [];
  });
}

/**
 * The part's history lines, planned: each session key they name resolved as the part's rows resolve it (`known`:
 * the sessions of the part), else looked up; for an admin's import only the caller's own imported sessions in
 * projects they may write (another's session, or none, is the same: the line writes nothing there).
 */
export async function planHistory(
  h: { team: D1Database; teamId: number },
  caller: Caller | null,
  all: readonly HistoryRecord[],
  known: ReadonlyMap<string, SessionRef>,
  members: ReadonlyMap<string, number> | null,
  projects: ReadonlyMap<string, ProjectTarget>,
): Promise<HistoryIn[]> {
  const tombstones = all.filter((r): r is TombstoneLine => r.kind === 'tombstone');
  const lines = all.filter((r): r is ObservationLine => r.kind !== 'tombstone');
  const buried = tombstones.length ? await tombstoneTargets(h, caller, tombstones, projects) : [];
  if (lines.length === 0) return buried;
  const keys = new Set<string>();
  for (const r of lines) {
    keys.add(r.session_key);
    if (r.kind === 'link') keys.add(r.to_session_key);
    if (r.kind === 'event' && r.by_session_key !== null) keys.add(r.by_session_key);
  }
  const missing = [...keys].filter((k) => !known.has(k));
  const found = await sessionsByKeys(
    h.team,
    h.teamId,
    caller ? missing.flatMap((k) => [k, importedSessionKey(caller.userId, k)]) : missing,
  );
  const sessions = new Map(known);
  for (const k of missing) {
    const s = found.get(caller ? importSessionKey(caller, k, found.get(k) ?? null) : k);
    if (s && (!caller || (mayImportIntoSession(caller, s) && mayWriteProject(caller, s))))
      sessions.set(k, { id: s.id });
  }
  const author = caller ? caller.userId : null;
  const ref = (key: string, hash: string): ObservationRef | null => {
    const session = sessions.get(key);
    return session ? { session, hash, author } : null;
  };
  const out: HistoryIn[] = [];
  for (const r of lines) {
    const of = ref(r.session_key, r.content_hash);
    if (!of) continue;
    if (r.kind === 'link') {
      // A replacement that is not there (or not the caller's) still marks the record outdated; a merge is dropped.
      const to = ref(r.to_session_key, r.to_content_hash) ?? (r.link === 'superseded_by' ? of : null);
      if (to)
        out.push({ kind: 'link', link: r.link === 'superseded_by' ? 'supersededBy' : 'mergedInto', from: of, to });
    } else if (r.kind === 'event') {
      const actorUserId =
        r.actor_user === null
          ? null
          : caller
            ? r.actor_user === caller.handle
              ? caller.userId
              : null
            : (members?.get(r.actor_user) ?? null);
      out.push({
        kind: 'event',
        of,
        by: r.by_session_key === null || r.by_content_hash === null ? null : ref(r.by_session_key, r.by_content_hash),
        action: r.action,
        actorUserId,
        actor: r.actor,
        reason: r.reason === null ? null : redact(r.reason),
        at: r.created_at,
        count: r.count,
        changes: importedChanges(r.changes),
      });
    } else {
      out.push({
        kind: 'signal',
        of,
        fetched: r.fetched,
        useful: r.useful,
        wrong: r.wrong,
        outdated: r.outdated,
        review: r.review,
        updatedAt: r.updated_at,
      });
    }
  }
  return out.concat(buried);
}
