// Reading receipts (issue 34): one session's memories with the evidence each was sent with, for `cairn why`
// (`GET /api/receipts`), the viewer's session page and the status line's counts. A member reads only their own
// sessions' receipts here; every record passes the visibility rule.
import { isStale, RECEIPT_CHANNELS, type WireReceipt, type WireReceipts } from '#shared/wire/receipts';
import { EVIDENCE_REASONS, EVIDENCE_VALUES, type Evidence, type EvidenceReason } from '#shared/evidence';
import type { AuthContext } from '../auth/types';
import { resolveVisibleProjects } from '../db/projects';
import { channelsOf, latestSession, receiptsOf, startedSession, type ReceiptRow } from '../db/receipts';
import { teamDb } from '../db/shards';
import { loadViewer, type Viewer } from '../db/visibility';
import type { CairnEnv } from '../env';
import { AppError } from '../lib/errors';

const iso = (ms: number) => new Date(ms).toISOString();
const isValue = (v: string): v is Evidence => (EVIDENCE_VALUES as readonly string[]).includes(v);
const isReason = (v: string): v is EvidenceReason => (EVIDENCE_REASONS as readonly string[]).includes(v);

/** A stored receipt as the API answers it. */
export const wireReceipt = (r: ReceiptRow): WireReceipt => ({
  id: r.id,
  title: r.title,
  type: r.type,
  project: r.project,
  author: r.author,
  created_at: iso(r.createdAt),
  channels: channelsOf(r.channels).filter((c) => RECEIPT_CHANNELS.includes(c)),
  evidence: {
    value: isValue(r.evidence) ? r.evidence : 'unknown',
    reasons: r.reasons ? r.reasons.split(',').filter(isReason) : [],
  },
  sent: r.sent,
  first_sent_at: iso(r.firstAt),
  last_sent_at: iso(r.lastAt),
  fetched_at: r.usedAt === null ? null : iso(r.usedAt),
});

/** A session's receipts the viewer may read (one statement); `owner` limits them to that member's. */
export async function sessionReceipts(
  d: D1Database,
  viewer: Viewer,
  sessionKey: string,
  owner?: number,
): Promise<WireReceipt[]> {
  return (await receiptsOf(d, viewer, sessionKey, owner)).map(wireReceipt);
}

/**
 * `cairn why`: the caller's session `session`, else the one this device started last in `project` (or at all).
 * A session of another member's is not found (404, like one that never was).
 */
export async function receiptsFor(
  env: CairnEnv,
  auth: AuthContext,
  q: { session?: string; project?: string },
): Promise<WireReceipts> {
  const d = await teamDb(env, auth.teamId);
  const viewer = await loadViewer(d, auth);
  const owner = { teamId: auth.teamId, userId: auth.userId, deviceId: auth.deviceId ?? 0 };
  let key = q.session ?? null;
  let started = key ? await startedSession(d, auth.teamId, auth.userId, key) : null;
  if (!key) {
    const projectId = q.project ? (await resolveVisibleProjects(d, auth, [q.project]))[0]?.id : undefined;
    if (q.project && projectId === undefined) throw new AppError(404, 'not_found', 'No such project.');
    started = await latestSession(d, owner, projectId);
    key = started?.sessionKey ?? null;
  }
  const memories = key ? await sessionReceipts(d, viewer, key, auth.userId) : [];
  if (q.session && !started && !memories.length)
    throw new AppError(404, 'not_found', 'No memories were sent to that session (or it is not yours).');
  return {
    session: key,
    project: started?.projectKey ?? memories[0]?.project ?? null,
    started_at: started ? iso(started.firstAt) : null,
    used: memories.length,
    stale: memories.filter((m) => isStale(m.evidence.value)).length,
    memories,
  };
}
