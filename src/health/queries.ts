// What GET /api/admin/health reads from a team's database: dead letters of sessions already emptied, the
// team's last retention sweep (its audit row), records the embedder skipped, and the database's size against
// D1's limit.
import { and, count, desc, eq, sum } from 'drizzle-orm';
import { db } from '../db/client';
import { auditLog, observations, prompts, sessions, summaries } from '../db/schema';
import { atLeastLiteral } from '../db/sqlite';
import { MAX_EMBED_FAILURES } from '../db/vectors';

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

/**
 * Records the embedder refused MAX_EMBED_FAILURES times, now skipped (found by keyword only), each table through
 * its small partial index of them.
 */
export async function embedSkipped(d1: D1Database, teamId: number): Promise<number> {
  const d = db(d1);
  const skipped = (t: typeof observations | typeof summaries | typeof prompts) =>
    d
      .select({ n: count() })
      .from(t)
      .where(and(eq(t.teamId, teamId), atLeastLiteral(t.embedFailures, MAX_EMBED_FAILURES)));
  const [o, s, p] = await d.batch([skipped(observations), skipped(summaries), skipped(prompts)]);
  return (o[0]?.n ?? 0) + (s[0]?.n ?? 0) + (p[0]?.n ?? 0);
}
