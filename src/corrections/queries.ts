// D1 reads of promotion (src/corrections/promote.ts): the candidates a person could promote in one project.
import { and, desc, eq, gt, isNull, or } from 'drizzle-orm';
import { db as dbOf, type Db } from '../db/client';
import { observationSignals, observations, users } from '../db/schema';
import { canReadObservation, type Viewer } from '../db/visibility';

/** The newest records of the project looked at for candidates: one walk of the (team, project, time) index. */
export const CANDIDATE_WINDOW = 500;

/**
 * Records of `projectId` worth promoting, best first: among its CANDIDATE_WINDOW newest current records the viewer
 * may read (and `authorUserId`'s alone when given: a member promotes only their own), those used (fetched) or marked
 * useful and never contradicted (no wrong or outdated flag, not superseded, merged, pending or promoted already).
 * One statement, bounded by the window whatever the team's size.
 */
export async function promoteCandidates(
  d1: D1Database | Db,
  viewer: Viewer,
  projectId: number,
  authorUserId: number | null,
  limit: number,
) {
  const d = dbOf(d1);
  const o = observations;
  const s = observationSignals;
  const recent = d
    .select({ id: o.id })
    .from(o)
    .where(
      and(
        eq(o.teamId, viewer.teamId),
        eq(o.projectId, projectId),
        canReadObservation(viewer),
        isNull(o.supersededBy),
        isNull(o.mergedInto),
        authorUserId === null ? undefined : eq(o.authorUserId, authorUserId),
      ),
    )
    .orderBy(desc(o.createdAt), desc(o.id))
    .limit(CANDIDATE_WINDOW)
    .as('recent');
  return d
    .select({
      id: o.id,
      title: o.title,
      author: users.handle,
      createdAt: o.createdAt,
      useful: s.useful,
      fetched: s.fetched,
    })
    .from(recent)
    .innerJoin(o, eq(o.id, recent.id))
    .innerJoin(s, eq(s.observationId, o.id))
    .innerJoin(users, eq(users.id, o.authorUserId))
    .where(and(isNull(s.review), eq(s.wrong, 0), eq(s.outdated, 0), or(gt(s.useful, 0), gt(s.fetched, 0))))
    .orderBy(desc(s.useful), desc(s.fetched), desc(o.id))
    .limit(limit);
}
