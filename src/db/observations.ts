// Observations in D1: the one insert path (observer turns, `remember`, bench seeding), their file index
// rows (forgetting deletes them: forget.ts).
import { and, eq, inArray, type SQL } from 'drizzle-orm';
import { redact, type RedactionTally } from '#shared/redact';
import { cjkTerms } from '../lib/cjk';
import type { Db } from './client';
import { heldKindsOf } from './held';
import type { ObservationContent } from '#shared/wire/records';
import { observationFiles, observations, sessions, type NewObservation } from './schema';
import { observationFileRows } from './sqlite';

/** Where and by whom it is filed, and its bookkeeping. The project may be read at store time (sqlite.ts). */
export type ObservationPlace = { projectId: number | SQL<number>; sessionId: number | SQL<number> } & Pick<
  NewObservation,
  | 'teamId'
  | 'importedAuthor'
  | 'promptNumber'
  | 'authorUserId'
  | 'deviceId'
  | 'agentId'
  | 'agentType'
  | 'generationId'
  | 'source'
  | 'createdAt'
  | 'storedAt'
  | 'discoveryTokens'
  | 'contentHash'
  | 'promptId'
  | 'turnKey'
  | 'gitBranch'
  | 'gitCommit'
  | 'releasedAt'
  | 'releasedBy'
>;

export interface FileRef {
  path: string;
  kind: 'read' | 'modified';
}

/**
 * Secrets redacted from every text an observation stores (src/shared/redact.ts, the client's own rules): the
 * server never trusts a client to have done it. Paths are kept as sent (they key the file index rows). Pure.
 */
export function redactObservation(o: ObservationContent, tally?: RedactionTally): ObservationContent {
  const r = (s: string) => redact(s, tally);
  const rn = (s: string | null) => (s === null ? null : r(s));
  return {
    ...o,
    title: rn(o.title),
    subtitle: rn(o.subtitle),
    narrative: rn(o.narrative),
    facts: o.facts.map(r),
    concepts: o.concepts.map(r),
  };
}

/**
 * The row for `o` at `place`: secrets redacted, JSON lists (stored as JSON text), the CJK bigrams for FTS and
 * the hold-back's kinds (held.ts) derived here, nowhere else. `tally` counts the redactions by kind (for the audit log).
 */
export function observationRow(
  place: ObservationPlace,
  raw: ObservationContent,
  tally?: RedactionTally,
): Omit<NewObservation, 'projectId' | 'sessionId'> & {
  projectId: number | SQL<number>;
  sessionId: number | SQL<number>;
} {
  const o = redactObservation(raw, tally);
  return {
    ...place,
    type: o.type,
    title: o.title,
    subtitle: o.subtitle,
    narrative: o.narrative,
    facts: JSON.stringify(o.facts),
    concepts: JSON.stringify(o.concepts),
    filesRead: JSON.stringify(o.filesRead),
    filesModified: JSON.stringify(o.filesModified),
    cjkTerms: cjkTerms(o.title, o.subtitle, o.narrative, ...o.facts, ...o.concepts),
    heldKinds: heldKindsOf([
      o.title,
      o.subtitle,
      o.narrative,
      ...o.facts,
      ...o.concepts,
      ...o.filesRead,
      ...o.filesModified,
    ]),
  };
}

/**
 * The one observation INSERT, idempotent per (session, content hash): answers the new row's id, type, title
 * and time, or nothing when the same content was already stored. Batchable.
 */
export const insertObservation = (d: Db, place: ObservationPlace, o: ObservationContent, tally?: RedactionTally) =>
  d
    .insert(observations)
    .values(observationRow(place, o, tally))
    .onConflictDoNothing({ target: [observations.sessionId, observations.contentHash] })
    .returning({
      id: observations.id,
      type: observations.type,
      title: observations.title,
      createdAt: observations.createdAt,
    });

/** File index rows for the observation stored under (session, hash); existing rows are kept. Batchable. */
export const insertObservationFiles = (
  d: Db,
  sessionId: number | SQL<number>,
  contentHash: string,
  files: readonly FileRef[],
) =>
  d
    .insert(observationFiles)
    .select(observationFileRows(sessionId, contentHash, files))
    .onConflictDoNothing();

/** The id of the observation stored under (session, hash), if any. */
export async function observationIdByHash(d: Db, sessionId: number, contentHash: string): Promise<number | undefined> {
  const row = await d
    .select({ id: observations.id })
    .from(observations)
    .where(and(eq(observations.sessionId, sessionId), eq(observations.contentHash, contentHash)))
    .get();
  return row?.id;
}

/**
 * Which of `hashes` a primed note of the project already carries, whoever primed it: priming is filed in each
 * member's manual session (one per member and project, idx_sessions_project), and the (session, hash) unique
 * index answers each. So a project primed by one teammate is not primed again by the next.
 */
export async function primedHashes(
  d: Db,
  teamId: number,
  projectId: number,
  hashes: readonly string[],
): Promise<Set<string>> {
  if (!hashes.length) return new Set();
  const rows = await d
    .select({ hash: observations.contentHash })
    .from(sessions)
    .innerJoin(observations, eq(observations.sessionId, sessions.id))
    .where(
      and(
        eq(sessions.teamId, teamId),
        eq(sessions.projectId, projectId),
        eq(sessions.platform, 'manual'),
        eq(observations.source, 'prime'),
        inArray(observations.contentHash, [...hashes]),
      ),
    );
  return new Set(rows.map((r) => r.hash));
}
