// Versions (issue 38): every change to a record is a version with who, when, why and the before/after of each
// field (src/versions/model.ts), one history per record (its corrections, flags, merges, releases and reviews
// are versions too). Authors and admins edit a record's text and revert it to any version, each a new version,
// through the one write policy: the text is cleaned and judged as the one insert would (redaction, the hold-back)
// and rendered through the fence wherever it is shown. A teammate reads only the current version (the row);
// forget deletes every version with the record (db/forget.ts deletes its observation_events).
import * as z from 'zod';
import type { AuthContext } from '../auth/types';
import { tallied, type RedactionTally } from '#shared/redact';
import { redactionAudit, type AuditEntry } from '../db/audit';
import { contentColumns } from '../db/observations';
import { teamDb } from '../db/shards';
import { settingsFor, type TeamSettings } from '../db/team-settings';
import { assertMayWrite } from '../db/write-policy';
import { hasAdminPower, viewerOf } from '../db/visibility';
import type { CairnEnv } from '../env';
import { AppError } from '../lib/errors';
import { jsonList } from '../lib/json-list';
import { normalizePath } from '../recall/file-context';
import { modeIdFor, recallMode } from '../recall/mode';
import { movingRefusal, writableTeamDb } from '../slots/enter-write';
import { deleteRecordVectors, indexObservations } from '../vectors/index-records';
import { getVectorAdapters } from '../vectors/adapters';
import {
  CONTENT_FIELDS,
  contentAt,
  diffContent,
  diffVersions,
  supersededAt,
  versionsOf,
  type Changes,
  type Content,
  type HistoryRow,
  type Version,
} from './model';
import { historyRows, versionTarget, writeVersion, type StoredColumns, type VersionTarget } from './queries';

/** History rows read for one record: its versions are numbered by position, so all of them are read. */
export const MAX_HISTORY = 500;
/** Edits and reverts of one record (each keeps the text it changed, so a record's history stays small). */
export const MAX_TEXT_VERSIONS = 50;
/** The same bound as a correction's reason. */
const REASON_MAX = 500;

const Id = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const Reason = z.string().trim().max(REASON_MAX, `reason: at most ${REASON_MAX} characters`);
const Line = (max: number) => z.string().trim().min(1).max(max);

/** An edit: any of the record's text fields, each replacing what it holds (files: the record's whole file list). */
export const EditBody = z
  .object({
    id: Id,
    title: Line(200).optional(),
    subtitle: z.string().trim().max(300).nullable().optional(),
    narrative: z.string().trim().max(8000, 'narrative: at most 8000 characters').nullable().optional(),
    facts: z.array(Line(1000)).max(20).optional(),
    concepts: z.array(Line(60)).max(10).optional(),
    files: z.array(Line(1024)).max(50).optional(),
    reason: Reason.optional(),
  })
  .strict()
  .refine((b) => EDIT_FIELDS.some((f) => b[f] !== undefined), {
    message: 'name a field to change: title, subtitle, narrative, facts, concepts or files',
  });
export type EditBody = z.infer<typeof EditBody>;
const EDIT_FIELDS = ['title', 'subtitle', 'narrative', 'facts', 'concepts', 'files'] as const;

export const RevertBody = z
  .object({
    id: Id,
    to: z
      .number()
      .int()
      .min(1)
      .max(MAX_HISTORY + 1),
    reason: Reason.optional(),
  })
  .strict();
export type RevertBody = z.infer<typeof RevertBody>;

export interface Changed {
  id: number;
  /** The record's version now (unchanged when nothing differed). */
  version: number;
  /** The fields that changed (text fields, and `superseded_by` for a revert); empty: nothing was written. */
  changed: string[];
}

const contentOf = (s: StoredColumns): Content => ({
  title: s.title,
  subtitle: s.subtitle,
  narrative: s.narrative,
  facts: jsonList(s.facts),
  concepts: jsonList(s.concepts),
  files_read: jsonList(s.filesRead),
  files_modified: jsonList(s.filesModified),
});

const STORED: Record<keyof Content, Exclude<keyof StoredColumns, 'supersededBy'>> = {
  title: 'title',
  subtitle: 'subtitle',
  narrative: 'narrative',
  facts: 'facts',
  concepts: 'concepts',
  files_read: 'filesRead',
  files_modified: 'filesModified',
};

interface Loaded {
  d: D1Database;
  target: VersionTarget;
  rows: HistoryRow[];
}

/** The record and its history, readable by the caller (404 otherwise, the same as a missing one). */
async function load(d: D1Database, auth: AuthContext, id: number): Promise<Loaded> {
  const viewer = viewerOf(auth, await settingsFor(d, auth));
  const target = await versionTarget(d, viewer, id);
  if (!target) throw new AppError(404, 'not_found', `No observation #${id}.`);
  const rows = await historyRows(d, auth.teamId, id, MAX_HISTORY + 1);
  return { d, target, rows };
}

/**
 * Who may change a record's text or revert it: its author, or an admin acting with an admin-scoped token; and
 * the write policy's writers of its project (a reader, or someone the project's project_writers leave out, puts
 * no text into it).
 */
function assertMayChange(auth: AuthContext, target: VersionTarget, settings: TeamSettings): void {
  if (target.authorUserId === auth.userId || hasAdminPower(auth)) {
    assertMayWrite(auth, target.project, settings.project_writers);
    return;
  }
  throw new AppError(
    403,
    'not_allowed',
    `Only the author of #${target.id} or a team admin (with an admin-scoped token) can edit or revert it; anyone can flag it (feedback "wrong" or "outdated").`,
  );
}

function assertRoom(rows: HistoryRow[], id: number): void {
  if (rows.length > MAX_HISTORY)
    throw new AppError(409, 'history_full', `#${id} has ${MAX_HISTORY} versions; remember a new record instead.`);
  if (rows.filter((r) => r.changes !== null).length >= MAX_TEXT_VERSIONS)
    throw new AppError(
      409,
      'too_many_versions',
      `#${id} was edited ${MAX_TEXT_VERSIONS} times; remember a new record and supersede this one instead.`,
    );
}

/** Concepts must belong to the team's mode (as `remember` checks them). */
async function assertConcepts(env: CairnEnv, d: D1Database, auth: AuthContext, concepts: string[]): Promise<void> {
  const mode = recallMode(modeIdFor(env, await settingsFor(d, auth)));
  const unknown = concepts.filter((c) => !mode.conceptIds.includes(c));
  if (unknown.length)
    throw new AppError(400, 'invalid_concept', `unknown concept "${unknown[0]}"; use: ${mode.conceptIds.join(', ')}.`);
}

/**
 * Writes the record's new text (and superseded_by, for a revert) as one version: cleaned and judged as the insert
 * would, only the fields that differ, conditional on what the record held (409 edit_conflict when someone changed
 * it meanwhile). Answers the fields that changed.
 */
async function applyVersion(
  l: Loaded,
  auth: AuthContext,
  wanted: Content,
  event: { action: 'edit' | 'revert'; reason: string | null; at: number; supersededBy?: number | null },
): Promise<Changed> {
  const { d, target, rows } = l;
  const current = contentOf(target.stored);
  const tally: RedactionTally = {};
  const cleaned = contentColumns(
    {
      type: target.type,
      title: wanted.title,
      subtitle: wanted.subtitle,
      narrative: wanted.narrative,
      facts: wanted.facts,
      concepts: wanted.concepts,
      filesRead: wanted.files_read,
      filesModified: wanted.files_modified,
    },
    tally,
  );
  const next = contentOf({ ...cleaned, supersededBy: null } as StoredColumns);
  const changes: Changes = diffContent(current, next);
  const before: Partial<StoredColumns> = {};
  const after: Partial<StoredColumns> = {};
  for (const f of CONTENT_FIELDS) {
    if (!changes[f]) continue;
    const col = STORED[f];
    before[col] = target.stored[col] as never;
    after[col] = cleaned[col] as never;
  }
  const filesChanged = changes.files_read !== undefined || changes.files_modified !== undefined;
  if (filesChanged)
    for (const col of ['filesRead', 'filesModified'] as const) {
      // The file index rows are written for both lists together (queries.ts finds the record by them).
      before[col] = target.stored[col];
      after[col] = cleaned[col] as string;
    }
  const state = event.supersededBy !== undefined && event.supersededBy !== target.stored.supersededBy;
  if (state) {
    before.supersededBy = target.stored.supersededBy;
    after.supersededBy = event.supersededBy ?? null;
  }
  const changed = [...Object.keys(changes), ...(state ? ['superseded_by'] : [])];
  if (!changed.length) return { id: target.id, version: rows.length + 1, changed };
  const version = rows.length + 2;
  const audit: AuditEntry[] = [
    {
      teamId: auth.teamId,
      actorUserId: auth.userId,
      action: `observation.${event.action}`,
      target: `observation:${target.id}`,
      detail: { version, fields: changed },
      at: event.at,
    },
  ];
  if (tallied(tally)) audit.push(redactionAudit(auth.teamId, auth.userId, 'edit', tally, event.at));
  const landed = await writeVersion(d, {
    teamId: auth.teamId,
    target,
    before,
    after: { ...after, cjkTerms: cleaned.cjkTerms, names: cleaned.names, heldKinds: cleaned.heldKinds },
    files: filesChanged
      ? [
          ...next.files_read.map((path) => ({ path, kind: 'read' as const })),
          ...next.files_modified.map((path) => ({ path, kind: 'modified' as const })),
        ]
      : null,
    event: {
      action: event.action,
      by: event.action === 'revert' ? (event.supersededBy ?? null) : null,
      actorUserId: auth.userId,
      actor: 'user',
      reason: event.reason,
      at: event.at,
      changes: JSON.stringify(changes),
    },
    audit,
  }).catch((err: unknown) => {
    // A record's text stays as it is while a move copies the team (migration 0032): 503 team_moving, sent again later.
    throw movingRefusal(err, event.at);
  });
  if (!landed)
    throw new AppError(409, 'edit_conflict', `#${target.id} changed while you edited it; read it again and retry.`);
  return { id: target.id, version, changed };
}

/** Edits a record's text: the fields given replace what it holds. Its author or an admin (admin scope). */
export async function editRecord(env: CairnEnv, auth: AuthContext, input: EditBody, now: number): Promise<Changed> {
  // Through the team's write gate: refused (503 team_moving) while the team moves between databases.
  const d = await writableTeamDb(env, auth.teamId);
  const l = await load(d, auth, input.id);
  assertMayChange(auth, l.target, await settingsFor(d, auth));
  assertRoom(l.rows, input.id);
  if (input.concepts) await assertConcepts(env, d, auth, input.concepts);
  const current = contentOf(l.target.stored);
  const wanted: Content = { ...current };
  if (input.title !== undefined) wanted.title = input.title;
  if (input.subtitle !== undefined) wanted.subtitle = input.subtitle || null;
  if (input.narrative !== undefined) wanted.narrative = input.narrative || null;
  if (input.facts !== undefined) wanted.facts = input.facts;
  if (input.concepts !== undefined) wanted.concepts = [...new Set(input.concepts)];
  if (input.files !== undefined) {
    // One list for the record's files: those it modified stay modified, the rest are files it read.
    const files = [...new Set(input.files.map(normalizePath).filter(Boolean))];
    wanted.files_modified = current.files_modified.filter((f) => files.includes(f));
    wanted.files_read = files.filter((f) => !wanted.files_modified.includes(f));
  }
  return applyVersion(l, auth, wanted, { action: 'edit', reason: input.reason || null, at: now });
}

/** Puts a record back as it was at version `to` (its text and whether it was current): a new version. */
export async function revertRecord(
  env: CairnEnv,
  auth: AuthContext,
  input: RevertBody,
  now: number,
): Promise<Changed & { reverted_to: number }> {
  const d = await writableTeamDb(env, auth.teamId);
  const l = await load(d, auth, input.id);
  assertMayChange(auth, l.target, await settingsFor(d, auth));
  assertRoom(l.rows, input.id);
  const latest = l.rows.length + 1;
  if (input.to > latest)
    throw new AppError(
      404,
      'version_not_found',
      `#${input.id} has versions 1 to ${latest}; there is no version ${input.to}.`,
    );
  const wanted = contentAt(contentOf(l.target.stored), l.rows, input.to);
  const reason = `reverted to version ${input.to}${input.reason ? `: ${input.reason}` : ''}`;
  const done = await applyVersion(l, auth, wanted, {
    action: 'revert',
    reason,
    at: now,
    supersededBy: supersededAt(l.target, l.rows, input.to),
  });
  return { ...done, reverted_to: input.to };
}

export interface History {
  id: number;
  superseded_by: number | null;
  /** The current version's number. */
  version: number;
  versions: Version[];
}

/** A readable record's versions, oldest first (creation is version 1). */
export async function recordHistory(env: CairnEnv, auth: AuthContext, id: number): Promise<History> {
  const l = await load(await teamDb(env, auth.teamId), auth, id);
  const rows = l.rows.slice(0, MAX_HISTORY);
  const versions = versionsOf(
    {
      id,
      content: contentOf(l.target.stored),
      supersededBy: l.target.stored.supersededBy,
      mergedInto: l.target.mergedInto,
      author: l.target.author,
      createdAt: l.target.createdAt,
      source: l.target.source,
    },
    rows,
  );
  return { id, superseded_by: l.target.stored.supersededBy, version: versions.length, versions };
}

/** What changed between two versions of a readable record (`to` defaults to the current one). */
export async function recordDiff(
  env: CairnEnv,
  auth: AuthContext,
  id: number,
  from: number,
  to: number | null,
): Promise<{
  id: number;
  from: number;
  to: number;
  changes: Changes;
  superseded_by?: { from: number | null; to: number | null };
}> {
  const l = await load(await teamDb(env, auth.teamId), auth, id);
  const latest = Math.min(l.rows.length, MAX_HISTORY) + 1;
  const b = to ?? latest;
  for (const v of [from, b])
    if (v > latest)
      throw new AppError(404, 'version_not_found', `#${id} has versions 1 to ${latest}; there is no version ${v}.`);
  const rows = l.rows.slice(0, MAX_HISTORY);
  return { id, from, to: b, ...diffVersions({ id, content: contentOf(l.target.stored) }, rows, from, b) };
}

/**
 * After a record's text changed: its old vectors go (an edit may have fewer facts, each its own vector) and the new
 * text is embedded. Never throws; a failure leaves the record unembedded for the embed job (embedded_at cleared).
 */
export async function reindexRecord(env: CairnEnv, teamId: number, id: number): Promise<void> {
  try {
    await deleteRecordVectors(getVectorAdapters(env), teamId, { observations: [id] });
  } catch {
    // The embed job re-embeds it; a stale fact vector only points at the record itself.
  }
  await indexObservations(env, teamId, [id]);
}
