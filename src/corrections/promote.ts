// Memory that graduates into the repository's own rules (issue 38): `cairn promote 12 40` writes the records into
// the repository's AGENTS.md or CLAUDE.md as a patch the person applies, and asks this to mark them promoted. A
// promoted record is a version (`promote`), leaves the context index, file context and per-prompt context (the
// instruction file carries it now, and injecting it twice spends the agent's context twice) and stays searchable,
// marked promoted. Who may: as for an edit, the author, or an admin acting with an admin-scoped token.
import * as z from 'zod';
import type { AuthContext } from '../auth/types';
import { promoteRows, promoteTargets } from '../db/corrections';
import { resolveVisibleProjects } from '../db/projects';
import { teamDb } from '../db/shards';
import { hasAdminPower, loadViewer } from '../db/visibility';
import type { CairnEnv } from '../env';
import { AppError } from '../lib/errors';
import { writableTeamDb } from '../slots/enter-write';
import { promoteCandidates } from './queries';

/** Records a promote may name: one batch of 2 statements each (+1) stays far inside an invocation's budget. */
export const PROMOTE_MAX = 20;
/** The instruction files a record may be promoted into (the ones agents read from a repository's top). */
export const PROMOTE_FILES = ['AGENTS.md', 'CLAUDE.md'] as const;

const Id = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
export const PromoteBody = z
  .object({
    ids: z
      .array(Id)
      .min(1, 'name at least one record (ids)')
      .max(PROMOTE_MAX, `at most ${PROMOTE_MAX} records at once`),
    to: z.enum(PROMOTE_FILES).default('AGENTS.md'),
  })
  .strict();
export type PromoteBody = z.infer<typeof PromoteBody>;

export interface Promoted {
  /** Marked promoted now, each with a new version. */
  promoted: number[];
  /** Already promoted: nothing written. */
  already: number[];
  to: string;
}

/**
 * Marks `ids` promoted, all or none: every one must be readable (404), the caller's own or the caller an admin
 * with the admin scope (403 not_allowed), and current (409 not_current: superseded, merged or flagged for review).
 */
export async function promote(env: CairnEnv, auth: AuthContext, input: PromoteBody, now: number): Promise<Promoted> {
  const d = await writableTeamDb(env, auth.teamId);
  const ids = [...new Set(input.ids)];
  const rows = new Map((await promoteTargets(d, await loadViewer(d, auth), ids)).map((r) => [r.id, r]));
  for (const id of ids) {
    const r = rows.get(id);
    if (!r) throw new AppError(404, 'not_found', `No observation #${id}.`);
    if (r.authorUserId !== auth.userId && !hasAdminPower(auth))
      throw new AppError(
        403,
        'not_allowed',
        `Only the author of #${id} or a team admin (with an admin-scoped token) can promote it; nothing was promoted.`,
      );
    if (r.supersededBy !== null || r.mergedInto !== null || r.review === 'pending')
      throw new AppError(
        409,
        'not_current',
        `#${id} is ${r.review === 'pending' ? 'flagged for review' : 'superseded'}; only current records can become rules. Nothing was promoted.`,
      );
  }
  const fresh = ids.filter((id) => rows.get(id)!.review !== 'promoted');
  await promoteRows(d, {
    teamId: auth.teamId,
    ids: fresh,
    actorUserId: auth.userId,
    reason: `promoted to ${input.to}`,
    at: now,
  });
  return { promoted: fresh, already: ids.filter((id) => !fresh.includes(id)), to: input.to };
}

export const CandidatesQuery = z.object({
  project: z.string().min(1).max(500),
  limit: z.coerce.number().int().min(1).max(PROMOTE_MAX).default(10),
});
export type CandidatesQuery = z.infer<typeof CandidatesQuery>;

export interface Candidate {
  id: number;
  title: string | null;
  author: string;
  time: string;
  useful: number;
  fetched: number;
}

/**
 * What the caller could promote in `project` (`/cairn:promote` asks the agent to choose among these): records used
 * most and marked useful, never contradicted; a member's own, an admin's (admin scope) anyone's. 404 for a
 * project the caller cannot see.
 */
export async function candidates(env: CairnEnv, auth: AuthContext, q: CandidatesQuery): Promise<Candidate[]> {
  const d = await teamDb(env, auth.teamId);
  const [project] = await resolveVisibleProjects(d, auth, [q.project]);
  if (!project) throw new AppError(404, 'project_not_found', `No project ${q.project} you may read.`);
  const viewer = await loadViewer(d, auth);
  const rows = await promoteCandidates(d, viewer, project.id, hasAdminPower(auth) ? null : auth.userId, q.limit);
  return rows.map((r) => ({
    id: r.id,
    title: r.title,
    author: r.author,
    time: new Date(r.createdAt).toISOString(),
    useful: r.useful,
    fetched: r.fetched,
  }));
}
