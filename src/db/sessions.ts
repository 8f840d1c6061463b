// Sessions and prompts in D1: the one insert path for each, the counters, and finding a visible session.
import { and, eq, inArray, type SQL } from 'drizzle-orm';
import { inertLine, inertText } from '#shared/inert';
import { redact, type RedactionTally } from '#shared/redact';
import { cjkTerms } from '../lib/cjk';
import { db as dbOf, type Db } from './client';
import { heldKindsOf } from './held';
import { prompts, sessions, type Session } from './schema';
import { maxOf, maxOfNullable, projectAtStoreTime, projectOrItsAlias } from './sqlite';
import { visibleProjectIds, type ProjectViewer } from './visibility';
import { manualSessionKey, mayWriteLiveSession } from './write-policy';
import { AppError } from '../lib/errors';

export type NewSessionRow = Pick<
  typeof sessions.$inferInsert,
  | 'teamId'
  | 'sessionKey'
  | 'userId'
  | 'deviceId'
  | 'platform'
  | 'startedAt'
  | 'promptCount'
  | 'endedAt'
  | 'importedAt'
  | 'importedAuthor'
  | 'gitBranch'
  | 'gitCommit'
  | 'retireAfter'
> & {
  projectId: number | SQL<number>;
};

/**
 * The one insert of a session row, idempotent per (team, session key), batchable: answers the id, owner,
 * project and import mark of the row that holds the key, whether this statement created it or an earlier one
 * did (the no-op update makes RETURNING answer for an existing row too).
 */
export const sessionUpsert = (d: Db, values: NewSessionRow) =>
  d
    .insert(sessions)
    .values(values)
    .onConflictDoUpdate({ target: [sessions.teamId, sessions.sessionKey], set: { sessionKey: values.sessionKey } })
    .returning({
      id: sessions.id,
      userId: sessions.userId,
      projectId: sessions.projectId,
      importedAt: sessions.importedAt,
    });

/** `sessionUpsert` run now, for a live write (ingest, `remember`) that knows its project by id and key. */
export async function upsertSession(
  d1: D1Database | Db,
  s: Omit<NewSessionRow, 'projectId'> & { projectId: number; projectKey?: string },
): Promise<Pick<Session, 'id' | 'userId' | 'projectId' | 'importedAt'>> {
  const { projectKey, ...values } = s;
  // A merge may have removed the project since its id was looked up by `projectKey`: its alias leads on.
  const row = await sessionUpsert(dbOf(d1), {
    ...values,
    projectId: projectOrItsAlias(s.teamId, s.projectId, projectKey ?? null),
  }).get();
  if (!row) throw new Error('session row vanished');
  return row;
}

/**
 * The caller's manual session of a project (made on first use): where remembered, primed and personal notes are
 * filed (`manual:<project>:<user>`, a key only the server makes). A row under that key that is not the caller's own
 * live session of that project is never borrowed (409 session_conflict).
 */
export async function manualSession(
  d1: D1Database | Db,
  caller: { teamId: number; userId: number; deviceId: number | null },
  projectId: number,
  now: number,
): Promise<number> {
  const manual = await upsertSession(d1, {
    teamId: caller.teamId,
    sessionKey: manualSessionKey(projectId, caller.userId),
    projectId,
    userId: caller.userId,
    deviceId: caller.deviceId,
    platform: 'manual',
    startedAt: now,
  });
  // Clients cannot send `manual:` ids (400 at the edge); a row made before that rule is never borrowed.
  if (!mayWriteLiveSession(caller, manual) || manual.projectId !== projectId) {
    throw new AppError(
      409,
      'session_conflict',
      'The session that holds remembered notes for this project belongs to someone else.',
    );
  }
  return manual.id;
}

/** The id of session `key` when it is in a project the caller may see; undefined otherwise (other teams' too). */
export async function findVisibleSession(
  d1: D1Database | Db,
  v: ProjectViewer,
  key: string,
): Promise<number | undefined> {
  const row = await dbOf(d1)
    .select({ id: sessions.id })
    .from(sessions)
    .where(
      and(
        eq(sessions.teamId, v.teamId),
        eq(sessions.sessionKey, key),
        inArray(sessions.projectId, visibleProjectIds(v)),
      ),
    )
    .get();
  return row?.id;
}

export interface PromptInput {
  teamId: number;
  projectId: number;
  sessionDbId: number;
  promptNumber: number;
  /** The agent's own prompt id, when its client sent one. */
  promptId?: string | null;
  /** null for a fully private prompt: the count moves on, nothing of the text is stored. */
  text: string | null;
  authorUserId: number;
  createdAt: number;
}

/** A prompt row as stored; the CJK bigrams for FTS are derived by `insertPrompt`. */
export type PromptRow = Pick<
  typeof prompts.$inferInsert,
  | 'teamId'
  | 'promptNumber'
  | 'text'
  | 'authorUserId'
  | 'createdAt'
  | 'promptId'
  | 'importedAuthor'
  | 'releasedAt'
  | 'releasedBy'
> & {
  projectId: number | SQL<number>;
  sessionId: number | SQL<number>;
};

/**
 * The one prompt INSERT, secrets redacted (src/shared/redact.ts; `tally` counts them by kind), instruction-like
 * text held back from other members (held.ts), idempotent per
 * (session, prompt number). Batchable; add `.returning()` to learn if it was new.
 */
export const insertPrompt = (d: Db, row: PromptRow, tally?: RedactionTally) => {
  const text = redact(inertText(row.text), tally);
  const provenance = (v: string | null | undefined) => (v == null ? v : inertLine(v));
  return d
    .insert(prompts)
    .values({
      ...row,
      promptId: provenance(row.promptId),
      importedAuthor: provenance(row.importedAuthor),
      text,
      cjkTerms: cjkTerms(text),
      heldKinds: heldKindsOf([text]),
    })
    .onConflictDoNothing({ target: [prompts.sessionId, prompts.promptNumber] });
};

/** Stores a prompt (idempotent per session and number) and raises the session's prompt count. */
export async function storePrompt(d1: D1Database | Db, p: PromptInput, tally?: RedactionTally): Promise<void> {
  const d = dbOf(d1);
  const count = d
    .update(sessions)
    .set({ promptCount: maxOf(sessions.promptCount, p.promptNumber) })
    .where(eq(sessions.id, p.sessionDbId));
  if (p.text === null) {
    await count.run();
    return;
  }
  const insert = insertPrompt(
    d,
    {
      teamId: p.teamId,
      projectId: projectAtStoreTime(p.sessionDbId, p.projectId),
      sessionId: p.sessionDbId,
      promptNumber: p.promptNumber,
      text: p.text,
      authorUserId: p.authorUserId,
      createdAt: p.createdAt,
      promptId: p.promptId ?? null,
    },
    tally,
  );
  await d.batch([count, insert]);
}

/**
 * Marks a session ended; a later end time wins, an earlier one never moves it back. `retireAfter` (server time)
 * is when its Durable Object may empty its storage: the daily sweep looks at objects past it (see schema.ts).
 */
export async function markSessionEnded(
  d1: D1Database | Db,
  sessionDbId: number,
  endedAt: number,
  retireAfter: number,
): Promise<void> {
  await dbOf(d1)
    .update(sessions)
    .set({
      endedAt: maxOfNullable(sessions.endedAt, endedAt),
      retireAfter: maxOfNullable(sessions.retireAfter, retireAfter),
    })
    .where(eq(sessions.id, sessionDbId))
    .run();
}
