// What the sweep of stranded session objects (session-retire.ts) reads and writes on one database: sessions past
// the time their object should have emptied its storage, in (retire_after, id) order through idx_sessions_retire.
import { and, asc, eq, gt, isNotNull, lte, or } from 'drizzle-orm';
import { runBatch } from '../db/batch';
import { db } from '../db/client';
import { sessions } from '../db/schema';

export interface RetireCandidate {
  id: number;
  teamId: number;
  sessionKey: string;
  retireAfter: number;
}

/** Up to `limit` sessions whose retire time is at or before `before`, after the position `after` in that order. */
export async function sessionsToRetire(
  d1: D1Database,
  before: number,
  after: { at: number; id: number } | null,
  limit: number,
): Promise<RetireCandidate[]> {
  const rows = await db(d1)
    .select({
      id: sessions.id,
      teamId: sessions.teamId,
      sessionKey: sessions.sessionKey,
      retireAfter: sessions.retireAfter,
    })
    .from(sessions)
    .where(
      and(
        isNotNull(sessions.retireAfter),
        lte(sessions.retireAfter, before),
        after
          ? or(gt(sessions.retireAfter, after.at), and(eq(sessions.retireAfter, after.at), gt(sessions.id, after.id)))
          : undefined,
      ),
    )
    .orderBy(asc(sessions.retireAfter), asc(sessions.id))
    .limit(limit);
  return rows.map((r) => ({ ...r, retireAfter: r.retireAfter ?? 0 }));
}

/** Each session's next retire time (null: its object holds nothing of it any more), in one batch. */
export async function setRetireAfter(
  d1: D1Database,
  rows: { id: number; retireAfter: number | null }[],
): Promise<void> {
  const d = db(d1);
  await runBatch(
    d,
    rows.map((r) => d.update(sessions).set({ retireAfter: r.retireAfter }).where(eq(sessions.id, r.id))),
  );
}
