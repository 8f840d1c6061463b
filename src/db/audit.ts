// Audit log in D1: the one insert path, and the dedupe read behind token anomalies.
import { and, eq, gt, isNull, type SQL } from 'drizzle-orm';
import { asD1Statement, db as dbOf, type Db } from './client';
import { auditLog } from './schema';
import { jsonField } from './sqlite';

export interface AuditEntry {
  teamId: number;
  /** The user who acted; null for the operator or an unauthenticated anomaly. */
  actorUserId: number | null;
  /** Stable dotted name, e.g. `user.add`, `token.revoke`, `token.revoked_used`, `forget`. */
  action: string;
  /** What was acted on, e.g. `user:12`, `token:34`, `project:github.com/acme/w`, `observation:9`. */
  target?: string | null;
  detail?: Record<string, unknown>;
  /** Defaults to Date.now(); pass it when the caller already holds a clock. */
  at?: number;
}

/** The one audit INSERT, for callers that put it in their own batch. */
export const insertAudit = (d: Db, e: AuditEntry) =>
  d.insert(auditLog).values({
    teamId: e.teamId, actorUserId: e.actorUserId, action: e.action, target: e.target ?? null,
    detail: JSON.stringify(e.detail ?? {}), createdAt: e.at ?? Date.now(),
  });

export async function writeAudit(d1: D1Database | Db, e: AuditEntry): Promise<void> {
  await insertAudit(dbOf(d1), e).run();
}

/**
 * The same INSERT as a D1 statement, for admin code that still batches raw D1 statements (src/teams/ until it
 * moves onto src/db/ queries). Built from `insertAudit`, so there is still one insert path.
 */
export function auditStatement(d1: D1Database, e: AuditEntry): D1PreparedStatement {
  return asD1Statement(d1, insertAudit(dbOf(d1), e));
}

/** Whether the same action on the same target (and same detail.device when given) was logged after `since`. */
export async function auditedSince(d1: D1Database | Db, e: AuditEntry, device: string | null, since: number): Promise<boolean> {
  const target: SQL = e.target == null ? isNull(auditLog.target) : eq(auditLog.target, e.target);
  const row = await dbOf(d1)
    .select({ one: auditLog.id })
    .from(auditLog)
    .where(
      and(
        eq(auditLog.teamId, e.teamId), eq(auditLog.action, e.action), target, gt(auditLog.createdAt, since),
        device === null ? undefined : eq(jsonField(auditLog.detail, '$.device'), device),
      ),
    )
    .limit(1)
    .get();
  return row !== undefined;
}
