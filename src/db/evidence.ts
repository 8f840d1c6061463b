// Evidence in D1 (issue 34): the ids a record's files had when it was made (observation_files.blob/ws/base), the
// names it cites (observations.names), and each device's last reported checkout of a project (checkouts). Read by
// every reader that judges records (recall, search, MCP), written by the context exchange and by stored turns.
import { and, eq } from 'drizzle-orm';
import type { CitedFile } from '#shared/evidence';
import { jsonList } from '../lib/json-list';
import { db as dbOf, type Db } from './client';
import { checkouts, observationFiles, observations } from './schema';
import { byIds, inJsonList, jsonPatch } from './sqlite';

export interface StoredEvidence {
  id: number;
  projectId: number;
  createdAt: number;
  files: CitedFile[];
  names: string[];
  /** Branch and commit it was recorded at (src/evidence/branches.ts judges its lineage by them). */
  gitBranch: string | null;
  gitCommit: string | null;
  /** Who recorded it, on which device (null: unknown). */
  authorUserId: number;
  deviceId: number | null;
}

/**
 * The evidence of each of `ids` (observations of the team; ids the caller got through the visibility rule): its
 * files that carry a blob id, its names, its branch. Two statements in one batch, whatever the number of ids.
 */
export async function evidenceOf(
  d1: D1Database | Db,
  teamId: number,
  ids: readonly number[],
): Promise<Map<number, StoredEvidence>> {
  const out = new Map<number, StoredEvidence>();
  if (!ids.length) return out;
  const d = dbOf(d1);
  const [rows, files] = await d.batch([
    d
      .select({
        id: observations.id,
        projectId: observations.projectId,
        createdAt: observations.createdAt,
        names: observations.names,
        gitBranch: observations.gitBranch,
        gitCommit: observations.gitCommit,
        authorUserId: observations.authorUserId,
        deviceId: observations.deviceId,
      })
      .from(observations)
      .where(byIds(observations.id, ids, eq(observations.teamId, teamId))),
    d
      .select({
        observationId: observationFiles.observationId,
        path: observationFiles.path,
        blob: observationFiles.blob,
        ws: observationFiles.ws,
        base: observationFiles.base,
      })
      .from(observationFiles)
      .where(byIds(observationFiles.observationId, ids, eq(observationFiles.teamId, teamId))),
  ]);
  for (const r of rows) out.set(r.id, { ...r, files: [], names: jsonList(r.names) });
  for (const f of files) {
    if (!f.blob) continue;
    out.get(f.observationId)?.files.push({ path: f.path, blob: f.blob, ws: f.ws, base: f.base });
  }
  return out;
}

/** Whose checkout: one device of one member (device 0: a token without a device). */
export interface CheckoutOwner {
  teamId: number;
  userId: number;
  deviceId: number;
}

export type CheckoutRow = typeof checkouts.$inferSelect;

/**
 * The owner's stored checkouts of `projectIds`, or of every project (one statement; a device keeps one row per
 * project it reported from).
 */
export async function checkoutsOf(
  d1: D1Database | Db,
  owner: CheckoutOwner,
  projectIds?: readonly number[],
): Promise<CheckoutRow[]> {
  if (projectIds && !projectIds.length) return [];
  return dbOf(d1)
    .select()
    .from(checkouts)
    .where(
      and(
        eq(checkouts.teamId, owner.teamId),
        eq(checkouts.userId, owner.userId),
        eq(checkouts.deviceId, owner.deviceId),
        projectIds ? inJsonList(checkouts.projectId, [...new Set(projectIds)]) : undefined,
      ),
    );
}

/** A stored state of the project with this digest, whichever device reported it (a state already seen). */
export async function checkoutByDigest(
  d1: D1Database | Db,
  teamId: number,
  projectId: number,
  digest: string,
): Promise<string | null> {
  const row = await dbOf(d1)
    .select({ entries: checkouts.entries })
    .from(checkouts)
    .where(and(eq(checkouts.teamId, teamId), eq(checkouts.projectId, projectId), eq(checkouts.digest, digest)))
    .limit(1)
    .get();
  return row?.entries ?? null;
}

/** The one write of a reported checkout: the whole row, its overlay cleared. */
export async function saveCheckout(d1: D1Database | Db, row: Omit<CheckoutRow, 'overlay'>): Promise<void> {
  const { teamId, projectId, userId, deviceId, ...rest } = row;
  await dbOf(d1)
    .insert(checkouts)
    .values({ ...row, overlay: '{}' })
    .onConflictDoUpdate({
      target: [checkouts.teamId, checkouts.projectId, checkouts.userId, checkouts.deviceId],
      set: { ...rest, overlay: '{}' },
    });
}

/**
 * What a stored turn learned of the device's files (their ids at its tool events) laid over its last report until
 * the next one. No row (the device never reported): nothing. Batchable.
 */
export const overlayCheckout = (
  d1: D1Database | Db,
  owner: CheckoutOwner,
  projectId: number,
  entries: Readonly<Record<string, string>>,
) =>
  dbOf(d1)
    .update(checkouts)
    .set({ overlay: jsonPatch(checkouts.overlay, entries) })
    .where(
      and(
        eq(checkouts.teamId, owner.teamId),
        eq(checkouts.projectId, projectId),
        eq(checkouts.userId, owner.userId),
        eq(checkouts.deviceId, owner.deviceId),
      ),
    );

/** Every stored checkout of a project (its forget). Batchable. */
export const deleteProjectCheckouts = (d1: D1Database | Db, teamId: number, projectId: number) =>
  dbOf(d1)
    .delete(checkouts)
    .where(and(eq(checkouts.teamId, teamId), eq(checkouts.projectId, projectId)));
