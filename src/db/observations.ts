// Observations in D1: the one insert path (observer turns, `remember`, bench seeding), their file index
// rows (forgetting deletes them: forget.ts).
import { and, eq, inArray, type SQL } from 'drizzle-orm';
import { inertLine, inertText } from '#shared/inert';
import { redact, type RedactionTally } from '#shared/redact';
import { cjkTerms } from '../lib/cjk';
import type { Db } from './client';
import { heldKindsOf } from './held';
import { observationType, type ObservationContent } from '#shared/wire/records';
import { observationFiles, observations, sessions, type NewObservation } from './schema';
import { observationFileRows } from './sqlite';
import { namesIn } from '#shared/names';

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

/**
 * Sources of rows a live session gets without the observer (src/store/session-notes.ts): its open todos at each Stop
 * (left out of the context index: they are a session's state, shown by its handoff) and handoff notes.
 */
export const TODOS_SOURCE = 'todos';
export const HANDOFF_SOURCE = 'handoff';

export interface FileRef {
  path: string;
  kind: 'read' | 'modified';
  /** Evidence ids of the file when the record was made (schema.ts observationFiles), when the client sent them. */
  blob?: string | null;
  ws?: string | null;
  base?: string | null;
}

/**
 * A file path as stored, in the observation's lists and its file index rows alike: one line, no control or bidi
 * characters (src/shared/inert.ts), secrets redacted (a token in a path is a token). Pure.
 */
export const storedPath = (path: string, tally?: RedactionTally): string => redact(inertLine(path), tally);

/**
 * Every field an observation stores made inert (control and bidi characters out; one-line fields on one line) and
 * redacted (src/shared/redact.ts, the client's own rules): the server never trusts a client or a model to have
 * done it, whatever path the row came by. The type is one of the closed set (else the fallback). Pure.
 */
export function redactObservation(o: ObservationContent, tally?: RedactionTally): ObservationContent {
  const line = (s: string) => redact(inertLine(s), tally);
  const text = (s: string) => redact(inertText(s), tally);
  const opt = (s: string | null, f: (s: string) => string) => (s === null ? null : f(s));
  return {
    type: observationType(inertLine(o.type)),
    title: opt(o.title, line),
    subtitle: opt(o.subtitle, line),
    narrative: opt(o.narrative, text),
    facts: o.facts.map(text),
    concepts: o.concepts.map(line),
    filesRead: o.filesRead.map((p) => storedPath(p, tally)),
    filesModified: o.filesModified.map((p) => storedPath(p, tally)),
  };
}

/**
 * The row for `o` at `place`: secrets redacted, JSON lists (stored as JSON text), the CJK bigrams for FTS, the
 * names it cites (src/shared/names.ts) and the hold-back's kinds (held.ts) derived here, nowhere else. `tally` counts the redactions by kind (for the audit log).
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
  const provenance = (s: string | null | undefined) => (s == null ? s : inertLine(s));
  return {
    ...place,
    agentId: provenance(place.agentId),
    agentType: provenance(place.agentType),
    importedAuthor: provenance(place.importedAuthor),
    promptId: provenance(place.promptId),
    // Use-based fading (src/db/fading.ts): a record's clock starts when it is stored.
    renewedAt: place.storedAt,
    type: o.type,
    title: o.title,
    subtitle: o.subtitle,
    narrative: o.narrative,
    facts: JSON.stringify(o.facts),
    concepts: JSON.stringify(o.concepts),
    filesRead: JSON.stringify(o.filesRead),
    filesModified: JSON.stringify(o.filesModified),
    cjkTerms: cjkTerms(o.title, o.subtitle, o.narrative, ...o.facts, ...o.concepts),
    names: JSON.stringify(namesIn([o.title, o.subtitle, o.narrative, ...o.facts])),
    // Every field is judged, the type too (closed now, but rows stored before kept what they were sent).
    heldKinds: heldKindsOf([
      o.type,
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

/** The columns an edit rewrites (src/versions/): the record's text, and what the insert derives from it. */
export type ContentColumns = Pick<
  NewObservation,
  | 'title'
  | 'subtitle'
  | 'narrative'
  | 'facts'
  | 'concepts'
  | 'filesRead'
  | 'filesModified'
  | 'cjkTerms'
  | 'names'
  | 'heldKinds'
>;

/**
 * An edit's new text as the one insert would store it (observationRow: redaction, the CJK terms, the names it cites,
 * the hold-back's judgement), so an edited record is cleaned and judged exactly like a new one. Pure.
 */
export function contentColumns(raw: ObservationContent, tally?: RedactionTally): ContentColumns {
  const row = observationRow(
    { teamId: 0, projectId: 0, sessionId: 0, authorUserId: 0, createdAt: 0, storedAt: 0, contentHash: '' },
    raw,
    tally,
  );
  return {
    title: row.title,
    subtitle: row.subtitle,
    narrative: row.narrative,
    facts: row.facts,
    concepts: row.concepts,
    filesRead: row.filesRead,
    filesModified: row.filesModified,
    cjkTerms: row.cjkTerms,
    names: row.names,
    heldKinds: row.heldKinds,
  };
}

/**
 * Deletes an observation's file index rows (an edit of its files writes them again), only while `onlyIf` holds (a
 * condition on the batch's earlier writes). Batchable.
 */
export const deleteObservationFiles = (d: Db, teamId: number, id: number, onlyIf?: SQL) =>
  d
    .delete(observationFiles)
    .where(and(eq(observationFiles.teamId, teamId), eq(observationFiles.observationId, id), onlyIf));

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

/**
 * File index rows for the observation stored under (session, hash); existing rows are kept. Paths are stored as
 * the observation's own lists store them (storedPath). Batchable.
 */
export const insertObservationFiles = (
  d: Db,
  sessionId: number | SQL<number>,
  contentHash: string,
  files: readonly FileRef[],
) =>
  d
    .insert(observationFiles)
    .select(
      observationFileRows(
        sessionId,
        contentHash,
        files.map((f) => ({ ...f, path: storedPath(f.path) })),
      ),
    )
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
