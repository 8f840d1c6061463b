// Observations in D1: the one insert path (observer turns, `remember`, bench seeding), their file index
// rows (forgetting deletes them: forget.ts).
import { and, eq, type SQL } from 'drizzle-orm';
import { cjkTerms } from '../lib/cjk';
import type { Db } from './client';
import type { ObservationContent } from './observation-content';
import { observationFiles, observations, type NewObservation } from './schema';
import { observationFileRows } from './sqlite';

/** Where and by whom it is filed, and its bookkeeping. The project may be read at store time (sqlite.ts). */
export type ObservationPlace = { projectId: number | SQL<number>; sessionId: number | SQL<number> } & Pick<
  NewObservation,
  'teamId' | 'importedAuthor' | 'promptNumber' | 'authorUserId' | 'deviceId' | 'agentId' | 'agentType' | 'generationId' | 'source' | 'createdAt' | 'storedAt' | 'discoveryTokens' | 'contentHash' | 'promptId' | 'turnKey'
>;

export interface FileRef {
  path: string;
  kind: 'read' | 'modified';
}

export type { ObservationContent };

/** The row for `o` at `place`: JSON lists (stored as JSON text) and the CJK bigrams for FTS are derived here, nowhere else. */
export function observationRow(place: ObservationPlace, o: ObservationContent): Omit<NewObservation, 'projectId' | 'sessionId'> & { projectId: number | SQL<number>; sessionId: number | SQL<number> } {
  return {
    ...place,
    type: o.type, title: o.title, subtitle: o.subtitle, narrative: o.narrative,
    facts: JSON.stringify(o.facts), concepts: JSON.stringify(o.concepts),
    filesRead: JSON.stringify(o.filesRead), filesModified: JSON.stringify(o.filesModified),
    cjkTerms: cjkTerms(o.title, o.subtitle, o.narrative, ...o.facts, ...o.concepts),
  };
}

/**
 * The one observation INSERT, idempotent per (session, content hash): answers the new row's id, type, title
 * and time, or nothing when the same content was already stored. Batchable.
 */
export const insertObservation = (d: Db, place: ObservationPlace, o: ObservationContent) =>
  d
    .insert(observations)
    .values(observationRow(place, o))
    .onConflictDoNothing({ target: [observations.sessionId, observations.contentHash] })
    .returning({ id: observations.id, type: observations.type, title: observations.title, createdAt: observations.createdAt });

/** File index rows for the observation stored under (session, hash); existing rows are kept. Batchable. */
export const insertObservationFiles = (d: Db, sessionId: number | SQL<number>, contentHash: string, files: readonly FileRef[]) =>
  d.insert(observationFiles).select(observationFileRows(sessionId, contentHash, files)).onConflictDoNothing();

/** The id of the observation stored under (session, hash), if any. */
export async function observationIdByHash(d: Db, sessionId: number, contentHash: string): Promise<number | undefined> {
  const row = await d
    .select({ id: observations.id })
    .from(observations)
    .where(and(eq(observations.sessionId, sessionId), eq(observations.contentHash, contentHash)))
    .get();
  return row?.id;
}
