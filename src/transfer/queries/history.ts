// The transfer's own statements for the correction history (src/transfer/history.ts): the export's pages of
// superseded/merged links, observation_events, observation_signals and prime_tombstones, the observations they name (with their
// session keys: the file names an observation by session key + content hash), and the statements an import
// writes them back with. Those look each observation up by (session, content hash) inside the batch itself, so a
// history line may name a row its own part makes, and, for an admin's import, only among the caller's own rows.
import { and, asc, eq, gt, isNotNull, isNull, ne, or } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import type { BatchItem } from '../../db/batch';
import { db, type Db } from '../../db/client';
import { insertEventRows, putSignalRowsFrom } from '../../db/corrections';
import { importTombstone } from '../../db/forget';
import {
  observationEvents,
  observationSignals,
  observations,
  primeTombstones,
  projects,
  sessions,
} from '../../db/schema';
import { byIds, coalesce, eventCopies, rowidOf, scalar, signalCopy } from '../../db/sqlite';
import { sessionIdOf, type NewSession, type SessionRef } from './transfer';

const qb = new QueryBuilder();

// --- export ----------------------------------------------------------------------------------------------

/** Observations with ids above `after` that are superseded or merged, by id. */
export async function linkPage(d1: D1Database, teamId: number, after: number, limit: number) {
  const o = observations;
  return db(d1)
    .select({ id: o.id, supersededBy: o.supersededBy, mergedInto: o.mergedInto })
    .from(o)
    .where(and(eq(o.teamId, teamId), gt(o.id, after), or(isNotNull(o.supersededBy), isNotNull(o.mergedInto))))
    .orderBy(asc(o.id))
    .limit(limit);
}

/** Event rows of observations with ids above `after`, by observation then id. */
export async function eventPage(d1: D1Database, teamId: number, after: number, limit: number) {
  const e = observationEvents;
  return db(d1)
    .select({
      observationId: e.observationId,
      action: e.action,
      byObservationId: e.byObservationId,
      actorUserId: e.actorUserId,
      actor: e.actor,
      reason: e.reason,
      createdAt: e.createdAt,
      changes: e.changes,
    })
    .from(e)
    .where(and(eq(e.teamId, teamId), gt(e.observationId, after)))
    .orderBy(asc(e.observationId), asc(e.id))
    .limit(limit);
}

/** Signals rows of observations with ids above `after`, by observation. */
export async function signalPage(d1: D1Database, teamId: number, after: number, limit: number) {
  const s = observationSignals;
  return db(d1)
    .select({
      observationId: s.observationId,
      fetched: s.fetched,
      useful: s.useful,
      wrong: s.wrong,
      outdated: s.outdated,
      review: s.review,
      updatedAt: s.updatedAt,
    })
    .from(s)
    .where(and(eq(s.teamId, teamId), gt(s.observationId, after)))
    .orderBy(asc(s.observationId))
    .limit(limit);
}

/** What the export needs to know of an observation a history row names: whether it is exported, and its name. */
export interface HistoryEnd {
  id: number;
  projectId: number;
  type: string;
  authorUserId: number;
  heldKinds: string | null;
  releasedAt: number | null;
  sessionKey: string;
  contentHash: string;
}

/** The live (not forgotten) observations `ids` of the team, by id. */
export async function historyEnds(d1: D1Database, teamId: number, ids: readonly number[]) {
  if (ids.length === 0) return new Map<number, HistoryEnd>();
  const o = observations;
  const rows: HistoryEnd[] = await db(d1)
    .select({
      id: o.id,
      projectId: o.projectId,
      type: o.type,
      authorUserId: o.authorUserId,
      heldKinds: o.heldKinds,
      releasedAt: o.releasedAt,
      sessionKey: sessions.sessionKey,
      contentHash: o.contentHash,
    })
    .from(o)
    .innerJoin(sessions, eq(sessions.id, o.sessionId))
    .where(byIds(o.id, ids, eq(o.teamId, teamId), isNull(o.deletedAt)));
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * Tombstones of primed notes someone forgot (prime_tombstones), with their project's key, after row `after` (the
 * table's rowid: it has no id column), by rowid.
 */
export async function tombstonePage(d1: D1Database, teamId: number, after: number, limit: number) {
  const t = primeTombstones;
  const row = rowidOf(t);
  return db(d1)
    .select({ row, projectId: t.projectId, project: projects.key, hash: t.hash, createdAt: t.createdAt })
    .from(t)
    .innerJoin(projects, and(eq(projects.id, t.projectId), eq(projects.teamId, t.teamId)))
    .where(and(eq(t.teamId, teamId), gt(row, after)))
    .orderBy(asc(row))
    .limit(limit);
}

// --- import ----------------------------------------------------------------------------------------------

/** An observation as a history line names it, on the target: its session, content hash, and (an admin's import) the only author it may have. */
export interface ObservationRef {
  session: SessionRef;
  hash: string;
  author: number | null;
}

/** One planned history line. */
export type HistoryIn =
  | { kind: 'link'; link: 'supersededBy' | 'mergedInto'; from: ObservationRef; to: ObservationRef }
  | {
      kind: 'event';
      of: ObservationRef;
      by: ObservationRef | null;
      action: string;
      actorUserId: number | null;
      actor: string;
      reason: string | null;
      at: number;
      count: number;
      /** What it changed in the record's text (JSON, as stored), null for acts on its state. */
      changes: string | null;
    }
  | {
      kind: 'signal';
      of: ObservationRef;
      fetched: number;
      useful: number;
      wrong: number;
      outdated: number;
      review: 'pending' | 'kept' | 'promoted' | null;
      updatedAt: number;
    }
  | { kind: 'tombstone'; project: NewSession['project']; hash: string; createdAt: number };

/** The observation's id as a value (NULL when the session has no such row, or not by that author). */
const idOf = (teamId: number, r: ObservationRef) =>
  scalar<number | null>(
    qb
      .select({ id: observations.id })
      .from(observations)
      .where(
        and(
          eq(observations.sessionId, sessionIdOf(teamId, r.session)),
          eq(observations.contentHash, r.hash),
          eq(observations.teamId, teamId),
          r.author === null ? undefined : eq(observations.authorUserId, r.author),
        ),
      ),
  );

/**
 * One statement per line. A link is set (a replacement the target lacks leaves the record superseded by itself,
 * outdated with nothing in its place, as the move does; a merge into a row it lacks is left out); an event adds
 * the copies the observation lacks; signals are set; a tombstone is added to its project. A line whose observation
 * (or project) is not there writes nothing.
 */
export function historyStatements(d: Db, teamId: number, lines: readonly HistoryIn[]): BatchItem[] {
  const o = observations;
  return lines.map((h): BatchItem => {
    if (h.kind === 'link') {
      const [from, to] = [idOf(teamId, h.from), idOf(teamId, h.to)];
      return h.link === 'supersededBy'
        ? d
            .update(o)
            .set({ supersededBy: coalesce<number>(to, o.id) })
            .where(and(eq(o.teamId, teamId), eq(o.id, from)))
        : d
            .update(o)
            .set({ mergedInto: to })
            .where(and(eq(o.teamId, teamId), eq(o.id, from), ne(o.id, to)));
    }
    if (h.kind === 'event') {
      const { of, by, ...e } = h;
      return insertEventRows(
        d,
        eventCopies({ ...e, teamId, observation: idOf(teamId, of), by: by === null ? null : idOf(teamId, by) }),
      );
    }
    if (h.kind === 'tombstone') return importTombstone(d, teamId, h.project, h.hash, h.createdAt);
    const { of, kind: _k, ...v } = h;
    return putSignalRowsFrom(d, signalCopy(teamId, idOf(teamId, of), v));
  });
}
