// The D1 side of a session: its row (created on first event) and its prompts.
import { AppError } from '../lib/errors';
import { cjkTerms } from '../lib/cjk';
import { PROJECT_AT_STORE_TIME } from './turn-store';

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
}

interface SessionRow {
  id: number;
  user_id: number;
}

/**
 * Finds or creates the session row. A session belongs to the user who opened it: another member of the
 * team cannot file events under it (their events would otherwise join someone else's observer turns).
 */
export async function ensureSessionRow(db: D1Database, s: SessionRowInput): Promise<number> {
  const find = () =>
    db.prepare('SELECT id, user_id FROM sessions WHERE team_id = ? AND session_key = ?').bind(s.teamId, s.sessionKey).first<SessionRow>();
  let row = await find();
  if (!row) {
    row = await db
      .prepare(
        `INSERT INTO sessions (team_id, session_key, project_id, user_id, device_id, platform, started_at)
         VALUES (?, ?, COALESCE((SELECT id FROM projects WHERE id = ?), (SELECT project_id FROM project_aliases WHERE team_id = ? AND key = ?), ?), ?, ?, ?, ?)
         ON CONFLICT(team_id, session_key) DO NOTHING RETURNING id, user_id`,
      )
      .bind(s.teamId, s.sessionKey, s.projectId, s.teamId, s.projectKey ?? null, s.projectId, s.userId, s.deviceId, s.platform, s.startedAt)
      .first<SessionRow>();
    row ??= await find();
  }
  if (!row) throw new Error('session row vanished');
  if (row.user_id !== s.userId) throw new AppError(409, 'session_conflict', 'This session id belongs to another user.');
  return row.id;
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

/** Stores a prompt (idempotent per session and number) and raises the session's prompt count. */
export async function storePrompt(db: D1Database, p: PromptInput): Promise<void> {
  const stmts = [db.prepare('UPDATE sessions SET prompt_count = MAX(prompt_count, ?) WHERE id = ?').bind(p.promptNumber, p.sessionDbId)];
  if (p.text !== null) {
    stmts.push(
      db
        .prepare(
          `INSERT INTO prompts (team_id, project_id, session_id, prompt_number, text, cjk_terms, author_user_id, created_at, prompt_id)
           VALUES (?, ${PROJECT_AT_STORE_TIME}, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(session_id, prompt_number) DO NOTHING`,
        )
        .bind(p.teamId, p.sessionDbId, p.projectId, p.sessionDbId, p.promptNumber, p.text, cjkTerms(p.text), p.authorUserId, p.createdAt, p.promptId ?? null),
    );
  }
  await db.batch(stmts);
}

export async function markSessionEnded(db: D1Database, sessionDbId: number, endedAt: number): Promise<void> {
  await db.prepare('UPDATE sessions SET ended_at = MAX(COALESCE(ended_at, 0), ?) WHERE id = ?').bind(endedAt, sessionDbId).run();
}
