// Token-use anomalies worth an audit row: a revoked or expired token still in use, a token seen from a
// device name it was not enrolled for. Bounded (auth/queries.ts): one row per token and kind per hour.
import { recordAnomaly } from './queries';

/** Header a client may send with its device (host) name; only used to notice anomalies. */
export const DEVICE_HEADER = 'x-cairn-device';

export function auditDeadTokenUse(
  db: D1Database,
  t: { teamId: number; tokenId: number; userId: number; reason: 'revoked' | 'expired'; path: string },
  now: number,
) {
  return recordAnomaly(db, {
    teamId: t.teamId,
    actorUserId: t.userId,
    action: `token.${t.reason}_used`,
    target: `token:${t.tokenId}`,
    detail: { path: t.path },
    at: now,
  });
}

export function auditNewDevice(
  db: D1Database,
  t: { teamId: number; tokenId: number; userId: number; enrolled: string | null; device: string },
  now: number,
) {
  return recordAnomaly(db, {
    teamId: t.teamId,
    actorUserId: t.userId,
    action: 'token.new_device',
    target: `token:${t.tokenId}`,
    detail: { device: t.device, enrolled_device: t.enrolled },
    sample: t.device,
    at: now,
  });
}
