// The D1 side of a session: its row (created on first event) and its prompts (queries in src/db/sessions.ts).
import { upsertSession } from '../db/sessions';
import { mayWriteLiveSession } from '../db/write-policy';
import { AppError } from '../lib/errors';

export { markSessionEnded, storePrompt, type PromptInput } from '../db/sessions';

export interface SessionRowInput {
  teamId: number;
  sessionKey: string;
  projectId: number;
  /** The key the project id was looked up by: if a merge removed that project since, its alias leads on. */
  projectKey?: string;
  userId: number;
  deviceId: number | null;
  platform: string;
  startedAt: number;
  /** The checkout's branch and commit at the first event (older clients: absent). */
  gitBranch?: string | null;
  gitCommit?: string | null;
}

/**
 * Finds or creates the session row. A session belongs to the user who opened it: another member of the
 * team cannot file events under it (their events would otherwise join someone else's observer turns), and
 * nobody's live events go into a session an import made (its prompt numbers are the file's).
 */
export async function ensureSessionRow(db: D1Database, s: SessionRowInput): Promise<number> {
  const row = await upsertSession(db, s);
  if (!mayWriteLiveSession({ userId: s.userId }, row))
    throw new AppError(409, 'session_conflict', 'This session id belongs to another user.');
  return row.id;
}
