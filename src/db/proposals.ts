// Proposals in D1 (issue 38): the one insert path of `proposals` (consolidation's merges and the observer's
// corrections while the team's `consolidation` setting is `review`), and which records a waiting merge already
// names (consolidation leaves them alone until an admin decides). The queue and the decisions: src/proposals/.
import { and, eq, notInArray, type SQL } from 'drizzle-orm';
import { QueryBuilder, type AnySQLiteColumn } from 'drizzle-orm/sqlite-core';
import { redact } from '#shared/redact';
import type { Db } from './client';
import { observations, proposals } from './schema';
import { mergeProposalRows } from './sqlite';

const qb = new QueryBuilder();
const intoProposals = (d: Db) => d.insert(proposals);

/** A merge waiting for review: one row per source (a source already waiting in a merge is left as it is). Batchable. */
export const proposeMerge = (d: Db, p: Parameters<typeof mergeProposalRows>[0]) =>
  intoProposals(d).select(mergeProposalRows(p)).onConflictDoNothing();

/** A correction the observer proposed: `id` superseded by `by` (its reason redacted like every stored text). Batchable. */
export const proposeSupersede = (
  d: Db,
  p: { teamId: number; id: number; by: number; reason: string; actorUserId: number; at: number },
) =>
  intoProposals(d)
    .values({
      teamId: p.teamId,
      kind: 'supersede',
      observationId: p.id,
      byObservationId: p.by,
      reason: redact(p.reason),
      actor: 'observer',
      actorUserId: p.actorUserId,
      createdAt: p.at,
    })
    .onConflictDoNothing();

/** Records not already a source of a waiting merge (`id NOT IN (…)` over the unique index). */
export function notProposedForMerge(teamId: number, id: AnySQLiteColumn = observations.id): SQL {
  return notInArray(
    id,
    qb
      .select({ id: proposals.observationId })
      .from(proposals)
      .where(and(eq(proposals.teamId, teamId), eq(proposals.kind, 'merge'))),
  );
}
