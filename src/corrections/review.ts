// The review queue (admins): records flagged wrong or outdated and not yet reviewed, and superseded records an
// admin has not kept. An admin confirms (forget for good), restores (current again, back in the context index)
// or keeps (left as it is, off the queue).
import * as z from 'zod';
import type { AuthContext } from '../auth/types';
import { correctionTarget, keepRows, latestReasons, restoreRows, reviewQueue, type QueueRow } from '../db/corrections';
import { teamDb } from '../db/shards';
import { writableTeamDb } from '../slots/enter-write';
import { loadViewer } from '../db/visibility';
import type { CairnEnv } from '../env';
import { forgetRecord } from '../forget/service';
import { heldItems, type HeldItem } from '../hold/routes';
import { AppError } from '../lib/errors';
import { proposalsFor, type ProposalItem } from '../proposals/service';
import { REASON_MAX } from './service';

export const QUEUE_LIMIT = 50;

export const ReviewBody = z
  .object({ decision: z.enum(['confirm', 'restore', 'keep']), reason: z.string().trim().max(REASON_MAX).optional() })
  .strict();
export type ReviewBody = z.infer<typeof ReviewBody>;

export interface QueueItem {
  id: number;
  title: string | null;
  type: string;
  project: string;
  author: string;
  time: string;
  /** Why it is on the queue. */
  state: 'flagged' | 'superseded';
  superseded_by: number | null;
  fetched: number;
  useful: number;
  wrong: number;
  outdated: number;
  /** The latest act on it: what, who, why. */
  last: { action: string; who: string | null; reason: string | null; at: string } | null;
}

export async function queueFor(
  env: CairnEnv,
  auth: AuthContext,
): Promise<{ flagged: QueueItem[]; superseded: QueueItem[]; held: HeldItem[]; proposals: ProposalItem[] }> {
  const d = await teamDb(env, auth.teamId);
  const q = await reviewQueue(d, await loadViewer(d, auth), QUEUE_LIMIT);
  const reasons = await latestReasons(
    d,
    auth.teamId,
    [...q.flagged, ...q.superseded].map((r) => r.id),
  );
  const item =
    (state: QueueItem['state']) =>
    (r: QueueRow): QueueItem => {
      const last = reasons.get(r.id);
      return {
        id: r.id,
        title: r.title,
        type: r.type,
        project: r.project,
        author: r.author,
        time: new Date(r.createdAt).toISOString(),
        state,
        superseded_by: r.supersededBy,
        fetched: r.fetched,
        useful: r.useful,
        wrong: r.wrong,
        outdated: r.outdated,
        last: last
          ? { action: last.action, who: last.who, reason: last.reason, at: new Date(last.at).toISOString() }
          : null,
      };
    };
  // Held back as instruction-like (src/hold/): released by POST /api/admin/release.
  return {
    flagged: q.flagged.map(item('flagged')),
    superseded: q.superseded.map(item('superseded')),
    held: await heldItems(d, auth.teamId, QUEUE_LIMIT),
    // Waiting for a decision (consolidation: review): POST /api/admin/proposals/:id.
    proposals: await proposalsFor(env, auth),
  };
}

/** An admin's decision on one record (the route is under the admin guard). */
export async function decide(
  env: CairnEnv,
  auth: AuthContext,
  id: number,
  body: ReviewBody,
  now: number,
): Promise<{ id: number; decision: ReviewBody['decision'] }> {
  // A decision changes a record: it passes the team's write gate (refused while the team moves).
  const d = await writableTeamDb(env, auth.teamId);
  const target = await correctionTarget(d, await loadViewer(d, auth), id);
  if (!target) throw new AppError(404, 'not_found', `No observation #${id}.`);
  const reason = body.reason?.trim() || null;
  if (body.decision === 'confirm') await forgetRecord(env, auth, 'observation', id, now);
  else if (body.decision === 'restore')
    await restoreRows(d, { teamId: auth.teamId, id, actorUserId: auth.userId, reason, at: now });
  else await keepRows(d, { teamId: auth.teamId, id, actorUserId: auth.userId, reason, at: now });
  return { id, decision: body.decision };
}
