// Audit log in D1: the one insert path (anomaly rows are bounded in anomalies.ts).
import { and, desc, eq, gte, type SQL } from 'drizzle-orm';
import { db as dbOf, type Db } from './client';
import type { RedactionTally } from '#shared/redact';
import { auditLog } from './schema';
import { inJsonList } from './sqlite';

export interface AuditEntry {
  teamId: number;
  /** The user who acted; null for the operator or an unauthenticated anomaly. */
  actorUserId: number | null;
  /** Stable dotted name, e.g. `user.add`, `token.revoke`, `token.revoked_used`, `forget`. */
  action: string;
  /** What was acted on, e.g. `user:12`, `token:34`, `project:github.com/acme/w`, `observation:9`. */
  target?: string | null;
  detail?: Record<string, unknown>;
  /**
   * The detail as a SQL expression (a JSON object), evaluated when the row is written: a job's chunk mark counts in
   * its own batch what the batch's deletes are about to remove (src/jobs/marks.ts). Takes precedence over `detail`.
   */
  detailSql?: SQL<string>;
  /** Defaults to Date.now(); pass it when the caller already holds a clock. */
  at?: number;
}

/** The one audit INSERT, for callers that put it in their own batch. */
export const insertAudit = (d: Db, e: AuditEntry) =>
  d.insert(auditLog).values({
    teamId: e.teamId,
    actorUserId: e.actorUserId,
    action: e.action,
    target: e.target ?? null,
    detail: e.detailSql ?? JSON.stringify(e.detail ?? {}),
    createdAt: e.at ?? Date.now(),
  });

export async function writeAudit(d1: D1Database | Db, e: AuditEntry): Promise<void> {
  await insertAudit(dbOf(d1), e).run();
}

/**
 * The audit row of secrets the server redacted from one write (`redaction`): counts by kind and the route the
 * text came in by, never the value or where in the text it stood.
 */
export const redactionAudit = (
  teamId: number,
  actorUserId: number | null,
  route: string,
  tally: RedactionTally,
  at: number,
): AuditEntry => ({
  teamId,
  actorUserId,
  action: 'redaction',
  target: `route:${route}`,
  detail: { kinds: tally },
  at,
});

/**
 * The detail of the team's newest audit row of `action` on `target` written at or after `since` (the index on
 * team and time bounds the look-up), or null: how a job step run again finds what its first run wrote.
 */
export async function auditDetail(
  d1: D1Database,
  teamId: number,
  action: string,
  target: string,
  since: number,
): Promise<Record<string, unknown> | null> {
  const [row] = await dbOf(d1)
    .select({ detail: auditLog.detail })
    .from(auditLog)
    .where(
      and(
        eq(auditLog.teamId, teamId),
        gte(auditLog.createdAt, since),
        eq(auditLog.action, action),
        eq(auditLog.target, target),
      ),
    )
    .orderBy(desc(auditLog.createdAt))
    .limit(1);
  return row ? (JSON.parse(row.detail) as Record<string, unknown>) : null;
}

/**
 * The details of the team's audit rows of `action` on any of `targets` written at or after `since`, by target (the
 * newest of each): the chunk marks a job step run again after a restart reads back (src/jobs/marks.ts). One statement.
 */
export async function auditDetails(
  d1: D1Database,
  teamId: number,
  action: string,
  targets: readonly string[],
  since: number,
): Promise<Map<string, Record<string, unknown>>> {
  const out = new Map<string, Record<string, unknown>>();
  if (targets.length === 0) return out;
  const rows = await dbOf(d1)
    .select({ target: auditLog.target, detail: auditLog.detail })
    .from(auditLog)
    .where(
      and(
        eq(auditLog.teamId, teamId),
        gte(auditLog.createdAt, since),
        eq(auditLog.action, action),
        inJsonList(auditLog.target, targets),
      ),
    )
    .orderBy(auditLog.createdAt);
  for (const r of rows) if (r.target !== null) out.set(r.target, JSON.parse(r.detail) as Record<string, unknown>);
  return out;
}
