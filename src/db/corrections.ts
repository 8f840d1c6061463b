// What happens to an observation after it is stored, in D1: corrections (superseded_by and its history),
// feedback counters and the review state (observation_signals), one event row per act (observation_events).
// Every read starts from the visibility rule; forgetting deletes these rows with the observation (db/forget.ts).
import { inertText } from '#shared/inert';
import {
  and,
  asc,
  desc,
  eq,
  inArray,
  isNotNull,
  isNull,
  ne,
  notInArray,
  or,
  type SQL,
  type SQLWrapper,
} from 'drizzle-orm';
import { alias, QueryBuilder, type AnySQLiteColumn } from 'drizzle-orm/sqlite-core';
import { redact } from '#shared/redact';
import { insertAudit } from './audit';
import { runBatch, type BatchItem } from './batch';
import { db as dbOf, type Db } from './client';
import { observationEvents, observationSignals, observations, projects, users } from './schema';
import { byIds, excluded, fetchedSignalRows, inJsonList, plus, usedSignalRows, versionEventRow } from './sqlite';
import { canReadObservation, type Viewer } from './visibility';
import { renewRows } from './fading';

export type FeedbackKind = 'wrong' | 'outdated' | 'useful';
export type CorrectionActor = 'user' | 'observer';

/** What a correction needs to know about a record the caller may read. */
export interface CorrectionTarget {
  id: number;
  projectId: number;
  authorUserId: number;
  supersededBy: number | null;
}

const qb = new QueryBuilder();

/** The observation `id` if the viewer may read it, with what the permission check needs. */
export async function correctionTarget(
  d1: D1Database | Db,
  viewer: Viewer,
  id: number,
): Promise<CorrectionTarget | null> {
  const row = await dbOf(d1)
    .select({
      id: observations.id,
      projectId: observations.projectId,
      authorUserId: observations.authorUserId,
      supersededBy: observations.supersededBy,
    })
    .from(observations)
    .where(and(eq(observations.id, id), canReadObservation(viewer)))
    .get();
  return row ?? null;
}

export interface SupersedeAct {
  teamId: number;
  id: number;
  /** The record that replaces it; null marks it outdated with nothing in its place. */
  by: number | null;
  actorUserId: number;
  actor: CorrectionActor;
  reason: string;
  at: number;
}

/**
 * Marks `id` superseded, in one batch with its event row and an audit row (the audit row holds no reason: it
 * outlives a forgotten record). Outdated without a replacement is stored as superseded by itself.
 */
export async function supersedeRows(
  d1: D1Database | Db,
  a: SupersedeAct,
  also: readonly BatchItem[] = [],
): Promise<void> {
  const d = dbOf(d1);
  await runBatch(d, [
    d
      .update(observations)
      .set({ supersededBy: a.by ?? a.id })
      .where(and(eq(observations.teamId, a.teamId), eq(observations.id, a.id))),
    insertEvent(d, {
      teamId: a.teamId,
      observationId: a.id,
      action: 'supersede',
      byObservationId: a.by,
      actorUserId: a.actorUserId,
      actor: a.actor,
      reason: a.reason,
      createdAt: a.at,
    }),
    insertAudit(d, {
      teamId: a.teamId,
      actorUserId: a.actorUserId,
      action: 'observation.supersede',
      target: `observation:${a.id}`,
      detail: { by: a.by, actor: a.actor },
      at: a.at,
    }),
    ...also,
  ]);
}

/** Puts `id` back: not superseded, not pending review (an admin's `restore`). */
export async function restoreRows(
  d1: D1Database | Db,
  a: { teamId: number; id: number; actorUserId: number; reason: string | null; at: number },
): Promise<void> {
  const d = dbOf(d1);
  await d.batch([
    d
      .update(observations)
      .set({ supersededBy: null })
      .where(and(eq(observations.teamId, a.teamId), eq(observations.id, a.id))),
    d
      .update(observationSignals)
      .set({ review: null, updatedAt: a.at })
      .where(and(eq(observationSignals.teamId, a.teamId), eq(observationSignals.observationId, a.id))),
    insertEvent(d, {
      teamId: a.teamId,
      observationId: a.id,
      action: 'restore',
      byObservationId: null,
      actorUserId: a.actorUserId,
      actor: 'user',
      reason: a.reason,
      createdAt: a.at,
    }),
    insertAudit(d, {
      teamId: a.teamId,
      actorUserId: a.actorUserId,
      action: 'observation.restore',
      target: `observation:${a.id}`,
      at: a.at,
    }),
  ]);
}

/** An admin keeps the record as it is (superseded stays superseded, a flag stays) and takes it off the queue. */
export async function keepRows(
  d1: D1Database | Db,
  a: { teamId: number; id: number; actorUserId: number; reason: string | null; at: number },
): Promise<void> {
  const d = dbOf(d1);
  await d.batch([
    intoSignals(d)
      .values({ observationId: a.id, teamId: a.teamId, review: 'kept', updatedAt: a.at })
      .onConflictDoUpdate({ target: observationSignals.observationId, set: { review: 'kept', updatedAt: a.at } }),
    insertEvent(d, {
      teamId: a.teamId,
      observationId: a.id,
      action: 'keep',
      byObservationId: null,
      actorUserId: a.actorUserId,
      actor: 'user',
      reason: a.reason,
      createdAt: a.at,
    }),
  ]);
}

type NewEvent = typeof observationEvents.$inferInsert;
/** The one insert path of observation_signals (every caller upserts on the observation id). */
const intoSignals = (d: Db) => d.insert(observationSignals);
/** The one insert path of observation_events; a reason is user text, inert and redacted like every text that is stored. */
const intoEvents = (d: Db) => d.insert(observationEvents);
const insertEvent = (d: Db, e: NewEvent) =>
  intoEvents(d).values({ ...e, reason: e.reason == null ? null : redact(inertText(e.reason)) });

/** One event row as it was stored elsewhere (a team move copies the history, src/transfer/queries/move-extras.ts). Batchable. */
export const insertEventRow = (d: Db, e: NewEvent) => insertEvent(d, e);

/** A signals row set to these counts and review state (a team move copies it; a second copy changes nothing). Batchable. */
export const putSignalRow = (d: Db, r: typeof observationSignals.$inferInsert) => {
  const { observationId: _id, ...set } = r;
  return intoSignals(d).values(r).onConflictDoUpdate({ target: observationSignals.observationId, set });
};

/**
 * Signals rows built by a select (an import's history lines: src/db/sqlite.ts `signalCopy`), each set to the
 * counts it brings (a line imported again changes nothing). Batchable.
 */
export const putSignalRowsFrom = (d: Db, rows: SQL) =>
  intoSignals(d)
    .select(rows)
    .onConflictDoUpdate({
      target: observationSignals.observationId,
      set: {
        fetched: excluded(observationSignals.fetched),
        useful: excluded(observationSignals.useful),
        wrong: excluded(observationSignals.wrong),
        outdated: excluded(observationSignals.outdated),
        review: excluded(observationSignals.review),
        updatedAt: excluded(observationSignals.updatedAt),
      },
    });

/** Event rows built by a select (consolidation's merges and undos, db/consolidation.ts): their reasons are cairn's own words. */
export const insertEventRows = (d: Db, rows: SQL) => intoEvents(d).select(rows);

/**
 * A version of observation `e.id` (an edit, a revert: src/versions/) written only while `when` holds of the
 * record, so it lands exactly when the update beside it in the batch does. The reason is redacted like every
 * stored text; `changes` is the record's own text, stored as the one insert stored it. Batchable.
 */
export const insertVersionRow = (d: Db, e: Parameters<typeof versionEventRow>[0], when: SQL | undefined) =>
  insertEventRows(d, versionEventRow({ ...e, reason: e.reason == null ? null : redact(e.reason) }, when));

/**
 * Feedback from one person: counted once per person and kind (a repeat answers `counted: false`). `wrong` and
 * `outdated` put the record up for review (out of the context index until an admin decides); `useful` counts.
 */
export async function addFeedback(
  d1: D1Database | Db,
  f: {
    teamId: number;
    id: number;
    userId: number;
    kind: FeedbackKind;
    reason: string | null;
    at: number;
    actor?: CorrectionActor;
  },
): Promise<{ counted: boolean }> {
  const d = dbOf(d1);
  const before = await d
    .select({ id: observationEvents.id })
    .from(observationEvents)
    .where(
      and(
        eq(observationEvents.observationId, f.id),
        eq(observationEvents.action, f.kind),
        eq(observationEvents.actorUserId, f.userId),
      ),
    )
    .get();
  if (before) return { counted: false };
  const s = observationSignals;
  const flags = f.kind !== 'useful';
  const counter = { useful: s.useful, wrong: s.wrong, outdated: s.outdated }[f.kind];
  const counted = [
    insertEvent(d, {
      teamId: f.teamId,
      observationId: f.id,
      action: f.kind,
      byObservationId: null,
      actorUserId: f.userId,
      actor: f.actor ?? 'user',
      reason: f.reason,
      createdAt: f.at,
    }),
    intoSignals(d)
      .values({ observationId: f.id, teamId: f.teamId, [f.kind]: 1, review: flags ? 'pending' : null, updatedAt: f.at })
      .onConflictDoUpdate({
        target: s.observationId,
        // A new flag re-opens a record an admin restored or kept; `useful` leaves the review state alone.
        set: { [f.kind]: plus(counter, 1), ...(flags ? { review: 'pending' } : {}), updatedAt: f.at },
      }),
  ] as const;
  // Marked useful is a use: its fading clock moves on (db/fading.ts).
  if (f.kind === 'useful') await d.batch([...counted, renewRows(d, f.teamId, [f.id], f.at)]);
  else await d.batch(counted);
  return { counted: true };
}

/**
 * One more fetch of each of `ids` by a session (MCP get_observations, timeline), ids outside the team ignored; a
 * fetch is a use, so their fading clocks move on (db/fading.ts). One batch of two statements.
 */
export async function bumpFetched(d1: D1Database | Db, teamId: number, ids: number[], at: number): Promise<void> {
  if (!ids.length) return;
  const d = dbOf(d1);
  await d.batch([
    intoSignals(d)
      .select(fetchedSignalRows(teamId, ids, at))
      .onConflictDoUpdate({
        target: observationSignals.observationId,
        set: { fetched: plus(observationSignals.fetched, 1), updatedAt: at },
      }),
    renewRows(d, teamId, ids, at),
  ]);
}

/**
 * Records a session was given by an injection and then fetched (db/receipts.ts markUsed, ids as a subquery): one
 * more `used` each, once per session; a record without signals yet gets its row. Batchable.
 */
export const bumpUsed = (d: Db, teamId: number, ids: SQLWrapper, at: number) =>
  intoSignals(d)
    .select(usedSignalRows(teamId, ids, at))
    .onConflictDoUpdate({
      target: observationSignals.observationId,
      set: { used: plus(observationSignals.used, 1), updatedAt: at },
    });

/** Corrections and feedback of the ids that have any, for ranking and rendering (one statement). */
export interface RecordSignal {
  id: number;
  supersededBy: number | null;
  useful: number;
  review: string | null;
}

export async function signalsOf(
  d1: D1Database | Db,
  teamId: number,
  ids: number[],
): Promise<Map<number, RecordSignal>> {
  if (!ids.length) return new Map();
  const o = observations;
  const s = observationSignals;
  const rows = await dbOf(d1)
    .select({ id: o.id, supersededBy: o.supersededBy, useful: s.useful, review: s.review })
    .from(o)
    .leftJoin(s, eq(s.observationId, o.id))
    .where(byIds(o.id, ids, eq(o.teamId, teamId), or(isNotNull(o.supersededBy), isNotNull(s.observationId))));
  return new Map(
    rows.map((r) => [
      r.id,
      { id: r.id, supersededBy: r.supersededBy, useful: r.useful ?? 0, review: r.review ?? null },
    ]),
  );
}

/**
 * Review states that keep a record out of the context index, file context, per-prompt context and consolidation
 * (search still finds it): `pending` (flagged wrong or outdated, not yet reviewed) and `promoted` (written into the
 * repository's own instruction file by `cairn promote`, which carries it from then on).
 */
export const OUT_OF_INDEX = ['pending', 'promoted'] as const;

/** Rows pending review or promoted are out of the context index: `id NOT IN (…)` over the partial index. */
export function notPendingReview(teamId: number, id: AnySQLiteColumn = observations.id): SQL {
  return notInArray(
    id,
    qb
      .select({ id: observationSignals.observationId })
      .from(observationSignals)
      .where(and(eq(observationSignals.teamId, teamId), inArray(observationSignals.review, [...OUT_OF_INDEX]))),
  );
}

/** What promoting needs to know of each of `ids` the viewer may read (one statement; others are absent). */
export async function promoteTargets(d1: D1Database | Db, viewer: Viewer, ids: number[]) {
  if (!ids.length) return [];
  const o = observations;
  const s = observationSignals;
  return dbOf(d1)
    .select({
      id: o.id,
      authorUserId: o.authorUserId,
      supersededBy: o.supersededBy,
      mergedInto: o.mergedInto,
      review: s.review,
    })
    .from(o)
    .leftJoin(s, eq(s.observationId, o.id))
    .where(byIds(o.id, ids, canReadObservation(viewer)));
}

/**
 * Marks each of `ids` promoted (review state `promoted`: out of the context index, still searchable), each with a
 * `promote` version, and one audit row naming the ids (never text), in one batch: 2 statements a record + 1.
 */
export async function promoteRows(
  d1: D1Database | Db,
  a: { teamId: number; ids: number[]; actorUserId: number; reason: string; at: number },
): Promise<void> {
  if (!a.ids.length) return;
  const d = dbOf(d1);
  await runBatch(d, [
    ...a.ids.flatMap((id) => [
      intoSignals(d)
        .values({ observationId: id, teamId: a.teamId, review: 'promoted', updatedAt: a.at })
        .onConflictDoUpdate({ target: observationSignals.observationId, set: { review: 'promoted', updatedAt: a.at } }),
      insertEvent(d, {
        teamId: a.teamId,
        observationId: id,
        action: 'promote',
        byObservationId: null,
        actorUserId: a.actorUserId,
        actor: 'user',
        reason: a.reason,
        createdAt: a.at,
      }),
    ]),
    insertAudit(d, {
      teamId: a.teamId,
      actorUserId: a.actorUserId,
      action: 'observation.promote',
      target: `observations:${a.ids.length}`,
      detail: { ids: a.ids },
      at: a.at,
    }),
  ]);
}

export interface QueueRow {
  id: number;
  title: string | null;
  type: string;
  project: string;
  author: string;
  createdAt: number;
  supersededBy: number | null;
  fetched: number;
  useful: number;
  wrong: number;
  outdated: number;
  review: string | null;
}

/**
 * The review queue: records flagged and not reviewed, and superseded records an admin has not kept, newest
 * first (at most `limit` of each). Both walk a partial index, so the queue costs what it holds.
 */
export async function reviewQueue(
  d1: D1Database | Db,
  viewer: Viewer,
  limit: number,
): Promise<{ flagged: QueueRow[]; superseded: QueueRow[] }> {
  const d = dbOf(d1);
  const o = alias(observations, 'o');
  const s = observationSignals;
  const fields = {
    id: o.id,
    title: o.title,
    type: o.type,
    project: projects.key,
    author: users.handle,
    createdAt: o.createdAt,
    supersededBy: o.supersededBy,
    fetched: s.fetched,
    useful: s.useful,
    wrong: s.wrong,
    outdated: s.outdated,
    review: s.review,
  };
  const base = () =>
    d
      .select(fields)
      .from(o)
      .innerJoin(projects, eq(projects.id, o.projectId))
      .innerJoin(users, eq(users.id, o.authorUserId));
  const [flagged, superseded] = await d.batch([
    base()
      .innerJoin(s, eq(s.observationId, o.id))
      .where(and(eq(s.teamId, viewer.teamId), eq(s.review, 'pending'), canReadObservation(viewer, o)))
      .orderBy(desc(s.updatedAt))
      .limit(limit),
    base()
      .leftJoin(s, eq(s.observationId, o.id))
      .where(
        and(
          eq(o.teamId, viewer.teamId),
          isNotNull(o.supersededBy),
          or(isNull(s.review), ne(s.review, 'kept')),
          canReadObservation(viewer, o),
        ),
      )
      .orderBy(desc(o.id))
      .limit(limit),
  ]);
  const fill = (r: (typeof flagged)[number] | (typeof superseded)[number]): QueueRow => ({
    ...r,
    fetched: r.fetched ?? 0,
    useful: r.useful ?? 0,
    wrong: r.wrong ?? 0,
    outdated: r.outdated ?? 0,
    review: r.review ?? null,
  });
  return { flagged: flagged.map(fill), superseded: superseded.map(fill) };
}

/** The latest reason given for each of `ids` (the queue shows why), one statement. */
export async function latestReasons(
  d1: D1Database | Db,
  teamId: number,
  ids: number[],
): Promise<Map<number, { action: string; reason: string | null; who: string | null; at: number }>> {
  if (!ids.length) return new Map();
  const e = observationEvents;
  const rows = await dbOf(d1)
    .select({ id: e.observationId, action: e.action, reason: e.reason, who: users.handle, at: e.createdAt, n: e.id })
    .from(e)
    .leftJoin(users, eq(users.id, e.actorUserId))
    .where(byIds(e.observationId, ids, eq(e.teamId, teamId)))
    .orderBy(desc(e.id));
  const out = new Map<number, { action: string; reason: string | null; who: string | null; at: number }>();
  for (const r of rows) if (!out.has(r.id)) out.set(r.id, { action: r.action, reason: r.reason, who: r.who, at: r.at });
  return out;
}

/** Ids as a list or as a subquery (`SELECT id FROM observations WHERE …`). */
type IdSet = number[] | SQLWrapper;
const within = (col: AnySQLiteColumn, ids: IdSet): SQL =>
  Array.isArray(ids) ? inJsonList(col, ids) : inArray(col, ids as SQLWrapper);

/**
 * Deletes the events and signals of observations (ids, or a subquery of ids) of a team: put in the same batch
 * as the observations' delete, before it, by every path that deletes them (forget, retention, a team's move).
 */
export const deleteCorrectionRows = (d: Db, teamId: number, ids: IdSet) =>
  [
    d
      .delete(observationEvents)
      .where(and(eq(observationEvents.teamId, teamId), within(observationEvents.observationId, ids))),
    d
      .delete(observationSignals)
      .where(and(eq(observationSignals.teamId, teamId), within(observationSignals.observationId, ids))),
  ] as const;
