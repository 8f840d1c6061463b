// Vector bookkeeping in D1: the local vector index (wrangler dev and tests; production uses Vectorize) and
// which observations still need embedding.
import { and, asc, count, desc, eq, isNull, type SQL } from 'drizzle-orm';
import { runBatch } from './batch';
import { db as dbOf, type Db } from './client';
import { localVectors, observations } from './schema';
import { hexOf, inJsonList, notInJsonList } from './sqlite';

export interface LocalVectorRow {
  observationId: number;
  teamId: number;
  projectId: number;
  type: string;
  embedding: ArrayBuffer;
}

/** Stores or replaces the vectors (one row per observation), in one batch. */
export async function upsertLocalVectors(d1: D1Database | Db, rows: LocalVectorRow[]): Promise<void> {
  const d = dbOf(d1);
  await runBatch(
    d,
    rows.map((r) => {
      const values = { ...r, embedding: Buffer.from(r.embedding) };
      return d.insert(localVectors).values(values).onConflictDoUpdate({ target: localVectors.observationId, set: values });
    }),
  );
}

export async function deleteLocalVectors(d1: D1Database | Db, teamId: number, ids: number[]): Promise<void> {
  await dbOf(d1).delete(localVectors).where(and(eq(localVectors.teamId, teamId), inJsonList(localVectors.observationId, ids))).run();
}

export interface LocalVectorScope {
  teamId: number;
  projectIds?: number[];
  excludeProjectIds?: number[];
  types?: string[];
}


/**
 * The newest `limit` vectors in scope, each with its fingerprint (hex of its first and last 8 bytes), newest
 * first: read from idx_local_vectors_fingerprint alone, never from the 2 KB vector rows.
 */
export async function localVectorFingerprints(d1: D1Database | Db, q: LocalVectorScope, limit: number): Promise<{ id: number; fp: string }[]> {
  const scope: (SQL | undefined)[] = [
    eq(localVectors.teamId, q.teamId),
    q.projectIds?.length ? inJsonList(localVectors.projectId, q.projectIds) : undefined,
    !q.projectIds?.length && q.excludeProjectIds?.length ? notInJsonList(localVectors.projectId, q.excludeProjectIds) : undefined,
    q.types?.length ? inJsonList(localVectors.type, q.types) : undefined,
  ];
  const rows = await dbOf(d1)
    .select({ id: localVectors.observationId, fp: localVectors.fingerprint })
    .from(localVectors)
    .where(and(...scope))
    .orderBy(desc(localVectors.observationId))
    .limit(limit);
  return rows.map((r) => ({ id: r.id, fp: r.fp ?? '' }));
}

/** The vectors of `ids` as hex strings. */
export async function localVectorHex(d1: D1Database | Db, ids: number[]): Promise<{ id: number; hex: string }[]> {
  return dbOf(d1)
    .select({ id: localVectors.observationId, hex: hexOf(localVectors.embedding) })
    .from(localVectors)
    .where(inJsonList(localVectors.observationId, ids));
}

/** The fields embedding needs, for the team's observations among `ids` (deleted ones included, to drop them). */
export async function observationsToEmbed(d1: D1Database | Db, teamId: number, ids: number[]) {
  return dbOf(d1)
    .select({
      id: observations.id, project_id: observations.projectId, type: observations.type, title: observations.title,
      subtitle: observations.subtitle, narrative: observations.narrative, facts: observations.facts, concepts: observations.concepts,
      files_read: observations.filesRead, files_modified: observations.filesModified, deleted_at: observations.deletedAt,
    })
    .from(observations)
    .where(and(eq(observations.teamId, teamId), inJsonList(observations.id, ids)));
}

export async function markEmbedded(d1: D1Database | Db, teamId: number, ids: number[], now: number): Promise<void> {
  await dbOf(d1).update(observations).set({ embeddedAt: now }).where(and(eq(observations.teamId, teamId), inJsonList(observations.id, ids))).run();
}

const unembedded = (teamId: number) => and(eq(observations.teamId, teamId), isNull(observations.embeddedAt), isNull(observations.deletedAt));

/** Ids of live observations not yet embedded, oldest first. */
export async function unembeddedIds(d1: D1Database | Db, teamId: number, limit: number): Promise<number[]> {
  const rows = await dbOf(d1).select({ id: observations.id }).from(observations).where(unembedded(teamId)).orderBy(asc(observations.id)).limit(limit);
  return rows.map((r) => r.id);
}

export async function countUnembedded(d1: D1Database | Db, teamId: number): Promise<number> {
  const row = await dbOf(d1).select({ n: count() }).from(observations).where(unembedded(teamId)).get();
  return row?.n ?? 0;
}
