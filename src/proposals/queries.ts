// The review queue's proposals (src/proposals/): the team's waiting proposals with the records they name, a
// proposal and its merge group, and their deletion (a decision's last statement).
import { and, asc, desc, eq } from 'drizzle-orm';
import { alias } from 'drizzle-orm/sqlite-core';
import { db as dbOf, type Db } from '../db/client';
import { observations, proposals, users } from '../db/schema';
import { inJsonList } from '../db/sqlite';
import { canReadObservation, type Viewer } from '../db/visibility';

export interface ProposalRow {
  id: number;
  kind: 'merge' | 'supersede';
  observationId: number;
  title: string | null;
  byObservationId: number | null;
  byTitle: string | null;
  reason: string | null;
  actor: string;
  who: string | null;
  createdAt: number;
}

/**
 * The newest `limit` proposal rows whose records (and replacement or survivor) the viewer may read, newest first.
 * One statement: the unique index (team, kind, observation) leads with the team.
 */
export async function proposalRows(d1: D1Database, viewer: Viewer, limit: number): Promise<ProposalRow[]> {
  const p = proposals;
  const o = alias(observations, 'o');
  const b = alias(observations, 'b');
  return dbOf(d1)
    .select({
      id: p.id,
      kind: p.kind,
      observationId: p.observationId,
      title: o.title,
      byObservationId: p.byObservationId,
      byTitle: b.title,
      reason: p.reason,
      actor: p.actor,
      who: users.handle,
      createdAt: p.createdAt,
    })
    .from(p)
    .innerJoin(o, eq(o.id, p.observationId))
    .innerJoin(b, eq(b.id, p.byObservationId))
    .leftJoin(users, eq(users.id, p.actorUserId))
    .where(and(eq(p.teamId, viewer.teamId), canReadObservation(viewer, o), canReadObservation(viewer, b)))
    .orderBy(desc(p.id))
    .limit(limit);
}

/** One proposal of the team. */
export async function proposalById(d1: D1Database, teamId: number, id: number) {
  const p = proposals;
  const row = await dbOf(d1)
    .select({
      id: p.id,
      kind: p.kind,
      observationId: p.observationId,
      byObservationId: p.byObservationId,
      reason: p.reason,
    })
    .from(p)
    .where(and(eq(p.teamId, teamId), eq(p.id, id)))
    .get();
  return row ?? null;
}

/** The rows of a merge waiting for `survivor` (its sources), oldest first. */
export async function mergeGroup(d1: D1Database, teamId: number, survivor: number) {
  return dbOf(d1)
    .select({ id: proposals.id, source: proposals.observationId })
    .from(proposals)
    .where(and(eq(proposals.teamId, teamId), eq(proposals.kind, 'merge'), eq(proposals.byObservationId, survivor)))
    .orderBy(asc(proposals.id));
}

/** Deletes proposal rows of the team by id (in a decision's batch). */
export const deleteProposals = (d: Db, teamId: number, ids: number[]) =>
  d.delete(proposals).where(and(eq(proposals.teamId, teamId), inJsonList(proposals.id, ids)));
