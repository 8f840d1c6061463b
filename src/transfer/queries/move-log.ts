// The change log of a team move (migration 0024, src/transfer/move-delta.ts): turning the tracking of a team on
// and off on the database it leaves, and reading the log a page at a time (what a page names: move-rows.ts).
import { and, count, eq, gt, lte, max } from 'drizzle-orm';
import { db } from '../../db/client';
import { auditLog, moveChanges, moveTracking, observationEvents } from '../../db/schema';

/** Where the log and the append-only tables stood when tracking began. */
export interface TrackStart {
  /** The team's last log entry before this move (entries up to it belong to an earlier move). */
  since: number;
  /** The database's last audit row and history event (the copy takes events up to it; later ones follow). */
  audit: number;
  events: number;
}

/**
 * Starts (or restarts) noting the team's changes on `d1` for move `moveId`, until `until` unless renewed, and
 * answers where the log and the append-only tables stood: one batch, so nothing written after it is missed.
 */
export async function startTracking(
  d1: D1Database,
  teamId: number,
  moveId: string,
  until: number,
): Promise<TrackStart> {
  const d = db(d1);
  const [, seq, audit, events] = await d.batch([
    d
      .insert(moveTracking)
      .values({ teamId, moveId, until })
      .onConflictDoUpdate({ target: moveTracking.teamId, set: { moveId, until } }),
    d
      .select({ n: max(moveChanges.seq) })
      .from(moveChanges)
      .where(eq(moveChanges.teamId, teamId)),
    d.select({ n: max(auditLog.id) }).from(auditLog),
    d.select({ n: max(observationEvents.id) }).from(observationEvents),
  ]);
  return { since: seq[0]?.n ?? 0, audit: audit[0]?.n ?? 0, events: events[0]?.n ?? 0 };
}

/**
 * Renews the tracking of move `moveId` until `until`; false when it had lapsed by `deadline` (or another move
 * took it): changes may then have gone unnoted, and the copy must start again.
 */
export async function renewTracking(
  d1: D1Database,
  teamId: number,
  moveId: string,
  deadline: number,
  until: number,
): Promise<boolean> {
  const rows = await db(d1)
    .update(moveTracking)
    .set({ until })
    .where(and(eq(moveTracking.teamId, teamId), eq(moveTracking.moveId, moveId), gt(moveTracking.until, deadline)))
    .returning({ teamId: moveTracking.teamId });
  return rows.length > 0;
}

/** The team's changes stop being noted on `d1` (the move flipped the map, or gave up). */
export async function stopTracking(d1: D1Database, teamId: number): Promise<void> {
  await db(d1).delete(moveTracking).where(eq(moveTracking.teamId, teamId));
}

/** The log's last entry for the team, and the database's last audit row and event: a round's snapshot. */
export async function logEnd(d1: D1Database, teamId: number): Promise<TrackStart> {
  const d = db(d1);
  const [seq, audit, events] = await d.batch([
    d
      .select({ n: max(moveChanges.seq) })
      .from(moveChanges)
      .where(eq(moveChanges.teamId, teamId)),
    d.select({ n: max(auditLog.id) }).from(auditLog),
    d.select({ n: max(observationEvents.id) }).from(observationEvents),
  ]);
  return { since: seq[0]?.n ?? 0, audit: audit[0]?.n ?? 0, events: events[0]?.n ?? 0 };
}

/** How many of the team's log entries come after `after`. */
export async function logBacklog(d1: D1Database, teamId: number, after: number): Promise<number> {
  const [row] = await db(d1)
    .select({ n: count() })
    .from(moveChanges)
    .where(and(eq(moveChanges.teamId, teamId), gt(moveChanges.seq, after)));
  return row?.n ?? 0;
}

export type LogEntry = typeof moveChanges.$inferSelect;

/** Up to `limit` of the team's log entries after `after`, up to `upTo`, oldest first. */
export async function logPage(
  d1: D1Database,
  teamId: number,
  after: number,
  upTo: number,
  limit: number,
): Promise<LogEntry[]> {
  return db(d1)
    .select()
    .from(moveChanges)
    .where(and(eq(moveChanges.teamId, teamId), gt(moveChanges.seq, after), lte(moveChanges.seq, upTo)))
    .orderBy(moveChanges.seq)
    .limit(limit);
}
