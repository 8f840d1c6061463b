// The rows a team move copies besides the export's records (src/transfer/move-job.ts, phase `extras`): the audit
// log, observer usage, project aliases, and the correction history of observations (superseded_by, merged_into,
// observation_events, observation_signals) and the tombstones of forgotten primed notes (without them the next
// prime after a move stored what someone forgot). Each page is one batch on the target, and a page copied again (a
// step that ran twice: its invocation died after the batch, before the job stored the cursor) adds nothing:
// rows without a key of their own (audit, events) are copied as many times as the source holds them up to the
// page's end, minus what the target holds already; usage and signals are set, not added; links are set.
import { and, count, eq, gt, isNotNull, lte, or } from 'drizzle-orm';
import { insertAudit } from '../../db/audit';
import { runBatch, type BatchItem } from '../../db/batch';
import { db, type Db } from '../../db/client';
import { insertEventRow, putSignalRow } from '../../db/corrections';
import { copyTombstone } from '../../db/forget';
import { putAlias } from '../../db/project-admin';
import {
  auditLog,
  observationEvents,
  observationSignals,
  observations,
  observerUsage,
  primeTombstones,
  projectAliases,
  projects,
  sessions,
} from '../../db/schema';
import { inJsonList } from '../../db/sqlite';
import { putObserverUsage } from '../../db/usage';

/** Where copying the rows an export leaves out has got to. */
export interface ExtrasCursor {
  /**
   * 0 audit log, 1 observer usage, 2 aliases, 3 superseded_by, 4 merged_into, 5 events, 6 signals, 7 prime
   * tombstones; EXTRAS_DONE: done.
   */
  part: number;
  after: number;
  /**
   * Usage (part 1) pages by session (`after`) and day and model (`afterKey`); aliases (part 2) by key: the last key
   * copied; tombstones (part 7) by project id (`after`) and hash.
   */
  afterKey?: string;
  /**
   * The audit log (part 0) and the events (part 5) up to these ids only: a move copying while the team writes
   * takes events up to where its change log began (a later event may name a record the copy has not reached; the
   * log's rounds copy it after that record), and each round of the log both up to where the round began.
   */
  auditUpTo?: number;
  eventsUpTo?: number;
}

/** The cursor's bounds, kept from part to part. */
const bounds = (c: ExtrasCursor) => ({
  ...(c.auditUpTo === undefined ? {} : { auditUpTo: c.auditUpTo }),
  ...(c.eventsUpTo === undefined ? {} : { eventsUpTo: c.eventsUpTo }),
});

export const EXTRAS_DONE = 8;

const parsedDetail = (text: string): Record<string, unknown> => {
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

/** Old ids → ids on the target of the team's sessions or projects, through their keys. */
async function translateKeyed(
  src: Db,
  dst: Db,
  teamId: number,
  table: typeof sessions | typeof projects,
  ids: number[],
): Promise<Map<number, number>> {
  if (ids.length === 0) return new Map();
  const keyCol = table === sessions ? sessions.sessionKey : projects.key;
  const old = await src
    .select({ id: table.id, key: keyCol })
    .from(table)
    .where(and(eq(table.teamId, teamId), inJsonList(table.id, ids)));
  if (old.length === 0) return new Map();
  const now = await dst
    .select({ id: table.id, key: keyCol })
    .from(table)
    .where(
      and(
        eq(table.teamId, teamId),
        inJsonList(
          keyCol,
          old.map((r) => r.key),
        ),
      ),
    );
  const byKey = new Map(now.map((r) => [r.key, r.id]));
  return new Map(old.flatMap((r) => (byKey.has(r.key) ? [[r.id, byKey.get(r.key)!] as const] : [])));
}

/** Old observation ids → ids on the target, through (session key, content hash), which name an observation in a team. */
export async function translateObservations(
  src: Db,
  dst: Db,
  teamId: number,
  ids: number[],
): Promise<Map<number, number>> {
  if (ids.length === 0) return new Map();
  const pairs = (rows: { id: number; key: string; hash: string }[]) =>
    rows.map((r) => [`${r.key}\u0000${r.hash}`, r.id] as const);
  const keyed = (d: Db) =>
    d
      .select({ id: observations.id, key: sessions.sessionKey, hash: observations.contentHash })
      .from(observations)
      .innerJoin(sessions, eq(sessions.id, observations.sessionId));
  const old = await keyed(src).where(and(eq(observations.teamId, teamId), inJsonList(observations.id, ids)));
  if (old.length === 0) return new Map();
  const now = await keyed(dst).where(
    and(
      eq(observations.teamId, teamId),
      inJsonList(sessions.sessionKey, [...new Set(old.map((r) => r.key))]),
      inJsonList(observations.contentHash, [...new Set(old.map((r) => r.hash))]),
    ),
  );
  const byKey = new Map(pairs(now));
  return new Map(pairs(old).flatMap(([k, id]) => (byKey.has(k) ? [[id, byKey.get(k)!] as const] : [])));
}

/**
 * How many copies of each row of `page` the target lacks: per identical row (`tupleOf`), the source's count up
 * to the page's last id minus the target's count. Rows come back once per missing copy, the first copies first.
 */
function missingCopies<R>(
  page: R[],
  tupleOf: (r: R) => string,
  source: Map<string, number>,
  target: Map<string, number>,
): R[] {
  const seen = new Map<string, number>();
  const out: R[] = [];
  // The page's copies of a row are its last `inPage` source copies; the earlier ones came with earlier pages.
  const inPage = new Map<string, number>();
  for (const r of page) inPage.set(tupleOf(r), (inPage.get(tupleOf(r)) ?? 0) + 1);
  for (const r of page) {
    const t = tupleOf(r);
    const nth = (source.get(t) ?? 0) - inPage.get(t)! + (seen.get(t) ?? 0) + 1;
    seen.set(t, (seen.get(t) ?? 0) + 1);
    if (nth > (target.get(t) ?? 0)) out.push(r);
  }
  return out;
}

const counted = (rows: ({ n: number } & Record<string, unknown>)[], tupleOf: (r: never) => string) =>
  new Map(rows.map((r) => [tupleOf(r as never), r.n]));

/**
 * Copies one page (at most `limit` rows) of what the export leaves out, from `from` to `to`, in one batch, with
 * ids translated through keys (the export's rows are on `to` already). Answers the cursor after it.
 */
export async function copyExtrasPage(
  from: D1Database,
  to: D1Database,
  teamId: number,
  c: ExtrasCursor,
  limit: number,
): Promise<ExtrasCursor> {
  const [src, dst] = [db(from), db(to)];
  const next = (rows: { id: number }[]): ExtrasCursor =>
    rows.length < limit
      ? { ...bounds(c), part: c.part + 1, after: 0 }
      : { ...bounds(c), part: c.part, after: rows[rows.length - 1]!.id };
  if (c.part === 0) {
    const rows = await src
      .select()
      .from(auditLog)
      .where(
        and(
          eq(auditLog.teamId, teamId),
          gt(auditLog.id, c.after),
          c.auditUpTo === undefined ? undefined : lte(auditLog.id, c.auditUpTo),
        ),
      )
      .orderBy(auditLog.id)
      .limit(limit);
    if (rows.length) {
      const tuple = (a: {
        actorUserId: number | null;
        action: string;
        target: string | null;
        detail: string;
        createdAt: number;
      }) => JSON.stringify([a.actorUserId, a.action, a.target, a.detail, a.createdAt]);
      const cols = {
        actorUserId: auditLog.actorUserId,
        action: auditLog.action,
        target: auditLog.target,
        detail: auditLog.detail,
        createdAt: auditLog.createdAt,
      };
      const at = inJsonList(auditLog.createdAt, [...new Set(rows.map((r) => r.createdAt))]);
      const grouped = (d: Db, upTo: number | null) =>
        d
          .select({ ...cols, n: count() })
          .from(auditLog)
          .where(and(eq(auditLog.teamId, teamId), at, upTo === null ? undefined : lte(auditLog.id, upTo)))
          .groupBy(...Object.values(cols));
      const [s, t] = await Promise.all([grouped(src, rows[rows.length - 1]!.id), grouped(dst, null)]);
      const todo = missingCopies(rows, tuple, counted(s, tuple), counted(t, tuple));
      await runBatch(
        dst,
        todo.map((a) =>
          insertAudit(dst, {
            teamId,
            actorUserId: a.actorUserId,
            action: a.action,
            target: a.target,
            detail: parsedDetail(a.detail),
            at: a.createdAt,
          }),
        ),
      );
    }
    return next(rows);
  }
  if (c.part === 1) {
    // Pages by (session, day, model), the table's key: a session with more rows than a page (a long one, or a
    // small page on Free) is carried whole across pages (paging by session alone skipped the rest of its rows).
    // Each row is set to the source's counts, so a page copied twice counts once.
    const u = observerUsage;
    const [day, model] = (c.afterKey ?? '\u0000').split('\u0000') as [string, string];
    const rows = await src
      .select()
      .from(u)
      .where(
        and(
          eq(u.teamId, teamId),
          c.afterKey === undefined
            ? gt(u.sessionId, c.after)
            : or(
                gt(u.sessionId, c.after),
                and(eq(u.sessionId, c.after), or(gt(u.day, day), and(eq(u.day, day), gt(u.model, model)))),
              ),
        ),
      )
      .orderBy(u.sessionId, u.day, u.model)
      .limit(limit);
    const moved = await translateKeyed(src, dst, teamId, sessions, [...new Set(rows.map((r) => r.sessionId))]);
    await runBatch(
      dst,
      rows.flatMap(({ teamId: _t, sessionId, ...row }) =>
        moved.has(sessionId) ? [putObserverUsage(dst, { ...row, teamId, sessionId: moved.get(sessionId)! })] : [],
      ),
    );
    const last = rows[rows.length - 1];
    return rows.length < limit || !last
      ? { ...bounds(c), part: 2, after: 0 }
      : { ...bounds(c), part: 1, after: last.sessionId, afterKey: `${last.day}\u0000${last.model}` };
  }
  if (c.part === 2) {
    // Every alias, a page at a time by key (an upsert each: a page copied twice changes nothing).
    const rows = await src
      .select()
      .from(projectAliases)
      .where(and(eq(projectAliases.teamId, teamId), gt(projectAliases.key, c.afterKey ?? '')))
      .orderBy(projectAliases.key)
      .limit(limit);
    const moved = await translateKeyed(src, dst, teamId, projects, [...new Set(rows.map((a) => a.projectId))]);
    await runBatch(
      dst,
      rows.flatMap((a) =>
        moved.has(a.projectId) ? [putAlias(dst, teamId, a.key, moved.get(a.projectId)!, a.createdAt)] : [],
      ),
    );
    return rows.length < limit
      ? { ...bounds(c), part: 3, after: 0 }
      : { ...bounds(c), part: 2, after: 0, afterKey: rows[rows.length - 1]!.key };
  }
  if (c.part === 3 || c.part === 4)
    return next(await copyLinks(src, dst, teamId, c.part === 3 ? 'supersededBy' : 'mergedInto', c.after, limit));
  if (c.part === 5) return next(await copyEvents(src, dst, teamId, c.after, limit, c.eventsUpTo));
  if (c.part === 6) {
    const rows = await src
      .select()
      .from(observationSignals)
      .where(and(eq(observationSignals.teamId, teamId), gt(observationSignals.observationId, c.after)))
      .orderBy(observationSignals.observationId)
      .limit(limit);
    const moved = await translateObservations(
      src,
      dst,
      teamId,
      rows.map((r) => r.observationId),
    );
    await runBatch(
      dst,
      rows.flatMap((r) =>
        moved.has(r.observationId)
          ? [putSignalRow(dst, { ...r, teamId, observationId: moved.get(r.observationId)! })]
          : [],
      ),
    );
    return next(rows.map((r) => ({ id: r.observationId })));
  }
  if (c.part === 7) return copyTombstonesPage(src, dst, teamId, c, limit);
  return c;
}

/** A page of the team's prime tombstones by (project id, hash), onto the projects' ids on the target. */
async function copyTombstonesPage(
  src: Db,
  dst: Db,
  teamId: number,
  c: ExtrasCursor,
  limit: number,
): Promise<ExtrasCursor> {
  const t = primeTombstones;
  const rows = await src
    .select()
    .from(t)
    .where(
      and(
        eq(t.teamId, teamId),
        or(gt(t.projectId, c.after), and(eq(t.projectId, c.after), gt(t.hash, c.afterKey ?? ''))),
      ),
    )
    .orderBy(t.projectId, t.hash)
    .limit(limit);
  const moved = await translateKeyed(src, dst, teamId, projects, [...new Set(rows.map((r) => r.projectId))]);
  await runBatch(
    dst,
    rows.flatMap((r) =>
      moved.has(r.projectId) ? [copyTombstone(dst, { ...r, teamId, projectId: moved.get(r.projectId)! })] : [],
    ),
  );
  const last = rows[rows.length - 1];
  return rows.length < limit || !last
    ? { ...bounds(c), part: EXTRAS_DONE, after: 0 }
    : { ...bounds(c), part: 7, after: last.projectId, afterKey: last.hash };
}

/**
 * Superseded or merged records stay so on the target. A replacement that did not move (forgotten) leaves the
 * record superseded by itself ("outdated, nothing in its place"); a merge whose survivor did not move is dropped
 * (the record stands again, as an undo would leave it).
 */
async function copyLinks(
  src: Db,
  dst: Db,
  teamId: number,
  col: 'supersededBy' | 'mergedInto',
  after: number,
  limit: number,
): Promise<{ id: number }[]> {
  const link = observations[col];
  const rows = await src
    .select({ id: observations.id, to: link })
    .from(observations)
    .where(and(eq(observations.teamId, teamId), isNotNull(link), gt(observations.id, after)))
    .orderBy(observations.id)
    .limit(limit);
  const moved = await translateObservations(src, dst, teamId, [...new Set(rows.flatMap((r) => [r.id, r.to!]))]);
  const sets: BatchItem[] = [];
  for (const r of rows) {
    const id = moved.get(r.id);
    const to = moved.get(r.to!) ?? (col === 'supersededBy' ? id : undefined);
    if (id !== undefined && to !== undefined)
      sets.push(
        dst
          .update(observations)
          .set({ [col]: to })
          .where(and(eq(observations.teamId, teamId), eq(observations.id, id))),
      );
  }
  await runBatch(dst, sets);
  return rows;
}

/** The history rows of moved observations, ids translated (a replacing record that did not move: none). */
async function copyEvents(
  src: Db,
  dst: Db,
  teamId: number,
  after: number,
  limit: number,
  upTo: number | undefined,
): Promise<{ id: number }[]> {
  const e = observationEvents;
  const rows = await src
    .select()
    .from(e)
    .where(and(eq(e.teamId, teamId), gt(e.id, after), upTo === undefined ? undefined : lte(e.id, upTo)))
    .orderBy(e.id)
    .limit(limit);
  if (rows.length === 0) return rows;
  const moved = await translateObservations(src, dst, teamId, [
    ...new Set(
      rows.flatMap((r) => (r.byObservationId === null ? [r.observationId] : [r.observationId, r.byObservationId])),
    ),
  ]);
  const cols = {
    observationId: e.observationId,
    action: e.action,
    byObservationId: e.byObservationId,
    actorUserId: e.actorUserId,
    actor: e.actor,
    reason: e.reason,
    createdAt: e.createdAt,
    changes: e.changes,
  };
  const grouped = (d: Db, ids: number[], upTo: number | null) =>
    d
      .select({ ...cols, n: count() })
      .from(e)
      .where(
        and(
          eq(e.teamId, teamId),
          // One JSON parameter for the list: a page of 100 rows names up to 100 observations (D1 binds ≤ 100).
          inJsonList(e.observationId, ids.length ? ids : [-1]),
          upTo === null ? undefined : lte(e.id, upTo),
        ),
      )
      .groupBy(...Object.values(cols));
  // Compared on the target's ids: the source's rows are translated first.
  const onTarget = rows.flatMap((r) =>
    moved.has(r.observationId)
      ? [
          {
            ...r,
            observationId: moved.get(r.observationId)!,
            byObservationId: r.byObservationId === null ? null : (moved.get(r.byObservationId) ?? null),
          },
        ]
      : [],
  );
  const tuple = (r: {
    observationId: number;
    action: string;
    byObservationId: number | null;
    actorUserId: number | null;
    actor: string;
    reason: string | null;
    createdAt: number;
    changes: string | null;
  }) =>
    JSON.stringify([
      r.observationId,
      r.action,
      r.byObservationId,
      r.actorUserId,
      r.actor,
      r.reason,
      r.createdAt,
      r.changes,
    ]);
  const [s, t] = await Promise.all([
    grouped(src, [...new Set(rows.map((r) => r.observationId))], rows[rows.length - 1]!.id),
    grouped(dst, [...new Set(onTarget.map((r) => r.observationId))], null),
  ]);
  const sourceCounts = new Map<string, number>();
  for (const r of s) {
    const id = moved.get(r.observationId);
    if (id === undefined) continue;
    const k = tuple({
      ...r,
      observationId: id,
      byObservationId: r.byObservationId === null ? null : (moved.get(r.byObservationId) ?? null),
    });
    sourceCounts.set(k, (sourceCounts.get(k) ?? 0) + r.n);
  }
  const todo = missingCopies(onTarget, tuple, sourceCounts, counted(t, tuple));
  await runBatch(
    dst,
    todo.map(({ id: _id, ...r }) => insertEventRow(dst, r)),
  );
  return rows;
}
