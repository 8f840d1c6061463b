// Token-use anomalies worth an audit row: a revoked or expired token still in use, a token seen from a
// device name it was not enrolled for. Deduplicated so a stale client retrying cannot flood the log.
import { auditStatement, type AuditEntry } from '../audit/audit';

/** Header a client may send with its device (host) name; only used to notice anomalies. */
export const DEVICE_HEADER = 'x-cairn-device';

const HOUR = 3_600_000;

/**
 * Writes the entry unless the same action on the same target (and same detail.device, if any) was logged
 * within `windowMs` (null = ever).
 */
export async function auditOnce(db: D1Database, e: AuditEntry & { at: number }, windowMs: number | null): Promise<void> {
  const insert = auditStatement(db, e);
  const device = typeof e.detail?.device === 'string' ? e.detail.device : null;
  const dup = await db
    .prepare(
      `SELECT 1 FROM audit_log WHERE team_id = ? AND action = ? AND target IS ? AND created_at > ?
          AND (? IS NULL OR json_extract(detail, '$.device') = ?) LIMIT 1`,
    )
    .bind(e.teamId, e.action, e.target ?? null, windowMs === null ? 0 : e.at - windowMs, device, device)
    .first();
  if (!dup) await insert.run();
}

export function auditDeadTokenUse(db: D1Database, t: { teamId: number; tokenId: number; userId: number; reason: 'revoked' | 'expired'; path: string }, now: number) {
  return auditOnce(
    db,
    { teamId: t.teamId, actorUserId: t.userId, action: `token.${t.reason}_used`, target: `token:${t.tokenId}`, detail: { path: t.path }, at: now },
    HOUR,
  );
}

export function auditNewDevice(db: D1Database, t: { teamId: number; tokenId: number; userId: number; enrolled: string | null; device: string }, now: number) {
  return auditOnce(
    db,
    {
      teamId: t.teamId, actorUserId: t.userId, action: 'token.new_device', target: `token:${t.tokenId}`,
      detail: { device: t.device, enrolled_device: t.enrolled }, at: now,
    },
    null,
  );
}
