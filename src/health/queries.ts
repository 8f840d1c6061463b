// What GET /api/admin/health reads from a team's database: dead letters of sessions already emptied, the
// team's last retention sweep (its audit row), and the database's size against D1's limit.
import { and, desc, eq, sum } from 'drizzle-orm';
import { db } from '../db/client';
import { auditLog, sessions } from '../db/schema';

/** Dead letters counted onto sessions whose Durable Object has emptied itself (they can no longer be retried). */
export async function retiredDeadLetters(d1: D1Database, teamId: number): Promise<number> {
  const [r] = await db(d1)
    .select({ n: sum(sessions.deadLetters) })
    .from(sessions)
    .where(eq(sessions.teamId, teamId));
  return Number(r?.n ?? 0);
}

/** The team's latest retention sweep that deleted something (the sweep writes an audit row only then). */
export async function lastRetentionSweep(
  d1: D1Database,
  teamId: number,
): Promise<{ at: number; detail: Record<string, unknown> } | null> {
  const [r] = await db(d1)
    .select({ at: auditLog.createdAt, detail: auditLog.detail })
    .from(auditLog)
    .where(and(eq(auditLog.teamId, teamId), eq(auditLog.action, 'retention.sweep')))
    .orderBy(desc(auditLog.createdAt))
    .limit(1);
  return r ? { at: r.at, detail: JSON.parse(r.detail) as Record<string, unknown> } : null;
}
