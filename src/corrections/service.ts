// Memory that stays true: a record can be superseded (by a newer one, or marked outdated), flagged by anyone
// (wrong / outdated / useful), counted when a session fetches it, and reviewed by an admin. The same functions
// serve MCP, the HTTP API (the viewer, `cairn supersede`) and the observer. Superseding changes what the
// context index and search show; only forget deletes (src/forget/).
import * as z from 'zod';
import type { AuthContext } from '../auth/types';
import {
  addFeedback,
  bumpFetched,
  correctionTarget,
  supersedeRows,
  type CorrectionActor,
  type CorrectionTarget,
  type FeedbackKind,
} from '../db/corrections';
import { teamDb } from '../db/shards';
import { writableTeamDb } from '../slots/enter-write';
import { hasAdminPower, loadViewer, type Viewer } from '../db/visibility';
import type { CairnEnv } from '../env';
import { AppError } from '../lib/errors';

export const REASON_MAX = 500;

const Id = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const Reason = z.string().trim().min(1, 'say why (reason)').max(REASON_MAX, `reason: at most ${REASON_MAX} characters`);

export const SupersedeBody = z.object({ id: Id, by: Id.nullish(), reason: Reason }).strict();
export type SupersedeBody = z.infer<typeof SupersedeBody>;

export const FeedbackBody = z
  .object({
    id: Id,
    kind: z.enum(['wrong', 'outdated', 'useful']),
    reason: z.string().trim().max(REASON_MAX).optional(),
  })
  .strict();
export type FeedbackBody = z.infer<typeof FeedbackBody>;

/** Who may supersede a record: its author, or a team admin acting with an admin-scoped token. */
export function maySupersede(
  auth: Pick<AuthContext, 'role' | 'scopes' | 'userId'>,
  target: Pick<CorrectionTarget, 'authorUserId'>,
): boolean {
  return target.authorUserId === auth.userId || hasAdminPower(auth);
}

async function readable(d: D1Database, viewer: Viewer, id: number, what = 'observation'): Promise<CorrectionTarget> {
  const row = await correctionTarget(d, viewer, id);
  if (!row) throw new AppError(404, 'not_found', `No ${what} #${id}.`);
  return row;
}

/**
 * Checks a correction before anything is written: `id` readable and the caller its author or an admin, `by`
 * (when given) another readable record that is itself current. Throws AppError (404, 403, 400, 409).
 */
export async function checkSupersede(
  d: D1Database,
  viewer: Viewer,
  auth: AuthContext,
  id: number,
  by: number | null,
): Promise<CorrectionTarget> {
  const target = await readable(d, viewer, id);
  if (!maySupersede(auth, target)) {
    throw new AppError(
      403,
      'not_allowed',
      `Only the author of #${id} or a team admin (with an admin-scoped token) can supersede it; anyone can flag it (feedback "outdated" or "wrong").`,
    );
  }
  if (by !== null) {
    if (by === id)
      throw new AppError(
        400,
        'invalid_arguments',
        'A record cannot supersede itself; leave out "by" to mark it outdated.',
      );
    const replacement = await readable(d, viewer, by);
    if (replacement.supersededBy !== null) {
      throw new AppError(
        409,
        'by_superseded',
        `#${by} is itself superseded${replacement.supersededBy === by ? '' : ` by #${replacement.supersededBy}`}; name the current record.`,
      );
    }
  }
  return target;
}

export interface Superseded {
  id: number;
  by: number | null;
  /** What it pointed at before (null: it was current). */
  previous: number | null;
}

/** Marks `id` superseded by `by` (or outdated), with who, when and why kept in its history. */
export async function supersede(
  env: CairnEnv,
  auth: AuthContext,
  input: { id: number; by?: number | null; reason: string },
  now: number,
  actor: CorrectionActor = 'user',
): Promise<Superseded> {
  const d = await writableTeamDb(env, auth.teamId);
  const viewer = await loadViewer(d, auth);
  const by = input.by ?? null;
  const target = await checkSupersede(d, viewer, auth, input.id, by);
  await supersedeRows(d, {
    teamId: auth.teamId,
    id: input.id,
    by,
    actorUserId: auth.userId,
    actor,
    reason: input.reason.trim().slice(0, REASON_MAX),
    at: now,
  });
  return { id: input.id, by, previous: target.supersededBy };
}

/** Feedback on a record anyone in the team may read; counted once per person and kind. */
export async function giveFeedback(
  env: CairnEnv,
  auth: AuthContext,
  input: FeedbackBody,
  now: number,
): Promise<{ id: number; kind: FeedbackKind; counted: boolean }> {
  const d = await writableTeamDb(env, auth.teamId);
  await readable(d, await loadViewer(d, auth), input.id);
  const { counted } = await addFeedback(d, {
    teamId: auth.teamId,
    id: input.id,
    userId: auth.userId,
    kind: input.kind,
    reason: input.reason?.trim() || null,
    at: now,
  });
  return { id: input.id, kind: input.kind, counted };
}

/** Counts one fetch of each observation a session read in full (MCP get_observations, timeline). */
export async function recordFetched(env: CairnEnv, auth: AuthContext, ids: number[], now: number): Promise<void> {
  if (!ids.length) return;
  await bumpFetched(await teamDb(env, auth.teamId), auth.teamId, ids, now);
}
