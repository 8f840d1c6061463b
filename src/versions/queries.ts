// The statements of versions (src/versions/): a readable record with its text, its history rows in order, and
// the one batch that writes a version (the event row, the record's update, its file rows), every statement
// conditional on the text the writer found, so two edits at once cannot both land on the same text.
import { and, asc, eq, isNotNull, isNull, type SQL } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import { insertAudit, type AuditEntry } from '../db/audit';
import { db as dbOf } from '../db/client';
import { insertVersionRow } from '../db/corrections';
import { deleteObservationFiles, insertObservationFiles, type ContentColumns, type FileRef } from '../db/observations';
import { observationEvents, observations, projects, users } from '../db/schema';
import { scalar } from '../db/sqlite';
import { canReadObservation, type Viewer } from '../db/visibility';
import { parseChanges, type HistoryRow } from './model';

const qb = new QueryBuilder();

/** The stored columns an edit or a revert may change. */
export type StoredColumns = Required<Omit<ContentColumns, 'cjkTerms' | 'names' | 'heldKinds'>> & {
  supersededBy: number | null;
};

/** A record the viewer may read, with what a version needs. */
export interface VersionTarget {
  id: number;
  projectId: number;
  sessionId: number;
  contentHash: string;
  authorUserId: number;
  author: string | null;
  createdAt: number;
  source: string;
  type: string;
  stored: StoredColumns;
  mergedInto: number | null;
  /** Its project as the write policy needs it (project_writers, a reader's own projects). */
  project: { key: string; visibility: 'team' | 'private'; ownerUserId: number | null };
}

export async function versionTarget(d1: D1Database, viewer: Viewer, id: number): Promise<VersionTarget | null> {
  const o = observations;
  const row = await dbOf(d1)
    .select({
      id: o.id,
      projectId: o.projectId,
      sessionId: o.sessionId,
      contentHash: o.contentHash,
      authorUserId: o.authorUserId,
      author: users.handle,
      createdAt: o.createdAt,
      source: o.source,
      type: o.type,
      title: o.title,
      subtitle: o.subtitle,
      narrative: o.narrative,
      facts: o.facts,
      concepts: o.concepts,
      filesRead: o.filesRead,
      filesModified: o.filesModified,
      supersededBy: o.supersededBy,
      mergedInto: o.mergedInto,
      projectKey: projects.key,
      visibility: projects.visibility,
      ownerUserId: projects.ownerUserId,
    })
    .from(o)
    .innerJoin(projects, eq(projects.id, o.projectId))
    .leftJoin(users, eq(users.id, o.authorUserId))
    .where(and(eq(o.id, id), canReadObservation(viewer)))
    .get();
  if (!row) return null;
  const { title, subtitle, narrative, facts, concepts, filesRead, filesModified, supersededBy, ...rest } = row;
  const { projectKey, visibility, ownerUserId, ...record } = rest;
  return {
    ...record,
    project: { key: projectKey, visibility, ownerUserId },
    stored: { title, subtitle, narrative, facts, concepts, filesRead, filesModified, supersededBy },
  };
}

/** The record's history rows, oldest first, at most `limit` (the caller asks for one more to see it is full). */
export async function historyRows(d1: D1Database, teamId: number, id: number, limit: number): Promise<HistoryRow[]> {
  const e = observationEvents;
  const rows = await dbOf(d1)
    .select({
      action: e.action,
      by: e.byObservationId,
      actor: e.actor,
      who: users.handle,
      reason: e.reason,
      at: e.createdAt,
      changes: e.changes,
    })
    .from(e)
    .leftJoin(users, eq(users.id, e.actorUserId))
    .where(and(eq(e.observationId, id), eq(e.teamId, teamId)))
    .orderBy(asc(e.id))
    .limit(limit);
  return rows.map((r) => ({ ...r, changes: parseChanges(r.changes) }));
}

const COLUMN = {
  title: observations.title,
  subtitle: observations.subtitle,
  narrative: observations.narrative,
  facts: observations.facts,
  concepts: observations.concepts,
  filesRead: observations.filesRead,
  filesModified: observations.filesModified,
  supersededBy: observations.supersededBy,
} as const;

/** The record still holds these stored values (`IS` for nulls). */
function holding(values: Partial<StoredColumns>): SQL | undefined {
  const parts = Object.entries(values).map(([k, v]) => {
    const col = COLUMN[k as keyof StoredColumns];
    return v === null ? isNull(col) : eq(col, v);
  });
  return parts.length ? and(...parts) : undefined;
}

export interface VersionWrite {
  teamId: number;
  target: Pick<VersionTarget, 'id' | 'sessionId' | 'contentHash'>;
  /** What the record holds now, for each column the version changes. */
  before: Partial<StoredColumns>;
  /** The new values (the text as the one insert would store it), with its CJK terms, names and hold-back verdict. */
  after: Partial<StoredColumns> & Pick<ContentColumns, 'cjkTerms' | 'names' | 'heldKinds'>;
  /** New file index rows when the files changed. */
  files: FileRef[] | null;
  event: {
    action: string;
    by: number | null;
    actorUserId: number;
    actor: string;
    reason: string | null;
    at: number;
    changes: string;
  };
  audit: AuditEntry[];
}

/**
 * Writes one version in one batch: the event row and the update only while the record still holds `before`
 * (else neither: answers false), the file rows only once it holds the new lists, the audit rows. A changed text
 * is embedded again (embedded_at cleared) and judged again: held when it reads as instructions (a release no
 * longer counts).
 */
export async function writeVersion(d1: D1Database, w: VersionWrite): Promise<boolean> {
  const d = dbOf(d1);
  const when = holding(w.before);
  const { cjkTerms, names, heldKinds, ...columns } = w.after;
  const text = Object.keys(columns).some((k) => k !== 'supersededBy');
  const set = {
    ...columns,
    ...(text
      ? {
          cjkTerms,
          // The identifiers evidence checks (src/shared/names.ts) are the new text's.
          names,
          heldKinds,
          embeddedAt: null,
          embedFailures: 0,
          ...(heldKinds === null ? {} : { releasedAt: null, releasedBy: null }),
        }
      : {}),
  };
  const o = observations;
  const mine = and(eq(o.teamId, w.teamId), eq(o.id, w.target.id));
  const files = w.files;
  // Once the update landed, the record holds the new lists: the file statements find it only then.
  const landed = files
    ? scalar<number>(
        qb
          .select({ s: o.sessionId })
          .from(o)
          .where(and(mine, holding({ filesRead: columns.filesRead, filesModified: columns.filesModified }))),
      )
    : null;
  const [, updated] = await d.batch([
    insertVersionRow(d, { teamId: w.teamId, id: w.target.id, ...w.event }, when),
    d.update(o).set(set).where(and(mine, when)).returning({ id: o.id }),
    ...(files && landed
      ? [
          deleteObservationFiles(d, w.teamId, w.target.id, isNotNull(landed)),
          insertObservationFiles(d, landed, w.target.contentHash, files),
        ]
      : []),
  ]);
  if ((updated as { id: number }[]).length !== 1) return false;
  // Audit rows only for a version that landed (they hold no text).
  if (w.audit.length) await d.batch(w.audit.map((a) => insertAudit(d, a)) as [ReturnType<typeof insertAudit>]);
  return true;
}
