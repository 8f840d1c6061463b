// Audit rows for anomalies (a dead token still in use, a token seen from another device name), bounded:
// one row per token and kind per hour, carrying a count and a few sample values, so a client sending 50
// different device names (or retrying a revoked token all day) adds one row an hour, not one per request.
import { writeAudit, type AuditEntry } from './audit';

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
export async function recordAnomaly(db: D1Database, e: Anomaly): Promise<void> {
  if (e.sample !== undefined) {
    const seen = await db
      .prepare(
        `SELECT 1 FROM audit_log a WHERE a.team_id = ?1 AND a.action = ?2 AND a.target IS ?3
            AND (json_extract(a.detail, '$.device') = ?4
                 OR EXISTS (SELECT 1 FROM json_each(a.detail, '$.devices') d WHERE d.value = ?4)) LIMIT 1`,
      )
      .bind(e.teamId, e.action, e.target ?? null, e.sample)
      .first();
    if (seen) return;
  }
  const recent = await db
    .prepare('SELECT id FROM audit_log WHERE team_id = ? AND action = ? AND target IS ? AND created_at > ? ORDER BY id DESC LIMIT 1')
    .bind(e.teamId, e.action, e.target ?? null, e.at - ANOMALY_WINDOW_MS)
    .first<{ id: number }>();
  if (!recent) {
    const detail = { ...e.detail, count: 1, ...(e.sample !== undefined ? { devices: [e.sample] } : {}) };
    await writeAudit(db, { ...e, detail });
    return;
  }
  await db
    .prepare(
      `UPDATE audit_log SET detail = json_set(detail,
           '$.count', COALESCE(json_extract(detail, '$.count'), 1) + 1,
           '$.last_at', ?2,
           '$.devices', CASE
             WHEN ?3 IS NULL THEN json_extract(detail, '$.devices')
             WHEN json_array_length(COALESCE(json_extract(detail, '$.devices'), '[]')) >= ?4 THEN json_extract(detail, '$.devices')
             ELSE json_insert(COALESCE(json_extract(detail, '$.devices'), '[]'), '$[#]', ?3) END)
        WHERE id = ?1`,
    )
    .bind(recent.id, e.at, e.sample ?? null, ANOMALY_SAMPLES)
    .run();
}
