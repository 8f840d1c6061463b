// Audit rows for anomalies (a dead token still in use, a token seen from another device name), bounded:
// one row per token and kind per hour, carrying a count and a few sample values, so a client sending 50
// different device names (or retrying a revoked token all day) adds one row an hour, not one per request.
import { and, desc, eq, gt, isNull, or } from 'drizzle-orm';
import { writeAudit, type AuditEntry } from '../db/audit';
import { db } from '../db/client';
import { auditLog } from '../db/schema';
import { anomalyCounted, jsonArrayHas, jsonField } from '../db/sqlite';

export const ANOMALY_WINDOW_MS = 3_600_000;
/** Distinct sample values (device names) kept on one row. */
export const ANOMALY_SAMPLES = 10;

export interface Anomaly extends AuditEntry {
  at: number;
  /** A value worth listing (a device name); one already recorded for this token and kind is not news. */
  sample?: string;
}

/**
 * Records the anomaly unless its sample was already recorded for this action and target; within the hour
 * of an earlier row for the same action and target, that row's count goes up (and the sample joins its
 * list while there is room) instead of a new row being written.
 */
export async function recordAnomaly(d1: D1Database, e: Anomaly): Promise<void> {
  const d = db(d1);
  const a = auditLog;
  const same = and(
    eq(a.teamId, e.teamId),
    eq(a.action, e.action),
    e.target == null ? isNull(a.target) : eq(a.target, e.target),
  );
  if (e.sample !== undefined) {
    const listed = or(eq(jsonField(a.detail, '$.device'), e.sample), jsonArrayHas(a.detail, '$.devices', e.sample));
    if (await d.select({ id: a.id }).from(a).where(and(same, listed)).limit(1).get()) return;
  }
  const recent = await d
    .select({ id: a.id })
    .from(a)
    .where(and(same, gt(a.createdAt, e.at - ANOMALY_WINDOW_MS)))
    .orderBy(desc(a.id))
    .limit(1)
    .get();
  if (!recent) {
    const detail = { ...e.detail, count: 1, ...(e.sample !== undefined ? { devices: [e.sample] } : {}) };
    await writeAudit(d, { ...e, detail });
    return;
  }
  await d
    .update(a)
    .set({ detail: anomalyCounted(a.detail, e.at, e.sample ?? null, ANOMALY_SAMPLES) })
    .where(eq(a.id, recent.id));
}
