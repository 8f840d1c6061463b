// Token-use anomalies worth an audit row: a revoked or expired token still in use, a token seen from a
// device name it was not enrolled for. Deduplicated so a stale client retrying cannot flood the log.
import { auditedSince, writeAudit, type AuditEntry } from '../db/audit';

/** Header a client may send with its device (host) name; only used to notice anomalies. */
export const DEVICE_HEADER = 'x-cairn-device';

const HOUR = 3_600_000;

/**
 * Writes the entry unless the same action on the same target (and same detail.device, if any) was logged
 * within `windowMs` (null = ever).
 */
export async function auditOnce(db: D1Database, e: AuditEntry & { at: number }, windowMs: number | null): Promise<void> {
  const device = typeof e.detail?.device === 'string' ? e.detail.device : null;
  if (!(await auditedSince(db, e, device, windowMs === null ? 0 : e.at - windowMs))) await writeAudit(db, e);
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
