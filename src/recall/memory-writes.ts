// Explicit memory edits by an agent: `remember` stores an observation directly (forgetting: src/forget/).
import { z } from 'zod';
import type { AuthContext } from '../auth/types';
import { ensureProject } from '../db/projects';
import { settingsFor } from '../db/team-settings';
import type { CairnEnv } from '../env';
import { cjkTerms } from '../lib/cjk';
import { AppError } from '../lib/errors';
import { observationHash } from '../store/hash';
import { normalizePath } from './file-context';
import { oneLine } from './format';
import { modeIdFor, recallMode } from './mode';

export const RememberInput = z.object({
  project: z.string().trim().min(1, 'give the project key').max(300),
  text: z.string().trim().min(1, 'say what to remember').max(8000, 'at most 8000 characters'),
  title: z.string().trim().max(200).optional(),
  type: z.string().trim().max(60).optional(),
  concepts: z.array(z.string().trim().min(1).max(60)).max(10).optional(),
  facts: z.array(z.string().trim().min(1).max(1000)).max(20).optional(),
  files: z.array(z.string().trim().min(1).max(1024)).max(20).optional(),
});
export type RememberInput = z.infer<typeof RememberInput>;

export interface Remembered {
  id: number;
  project: string;
  duplicate: boolean;
}

const DEFAULT_TYPE = 'discovery';

/** Key of the per-user, per-project session that holds remembered observations. */
export const manualSessionKey = (projectId: number, userId: number) => `manual:${projectId}:${userId}`;

async function manualSession(db: D1Database, auth: AuthContext, projectId: number, now: number): Promise<number> {
  const key = manualSessionKey(projectId, auth.userId);
  const row = await db
    .prepare(
      `INSERT INTO sessions (team_id, session_key, project_id, user_id, device_id, platform, started_at) VALUES (?, ?, ?, ?, ?, 'manual', ?)
       ON CONFLICT(team_id, session_key) DO UPDATE SET session_key = excluded.session_key RETURNING id, user_id, project_id`,
    )
    .bind(auth.teamId, key, projectId, auth.userId, auth.deviceId, now)
    .first<{ id: number; user_id: number; project_id: number }>();
  if (!row) throw new Error('manual session row missing');
  // Clients cannot send `manual:` ids (400 at the edge); a row made before that rule is never borrowed.
  if (row.user_id !== auth.userId || row.project_id !== projectId) {
    throw new AppError(409, 'session_conflict', 'The session that holds remembered notes for this project belongs to someone else.');
  }
  return row.id;
}

/**
 * Stores what the agent was asked to remember as an observation (source `remember`), deduplicated by content
 * within the user's manual session of that project. Type and concepts must belong to the team's mode.
 */
export async function remember(env: CairnEnv, auth: AuthContext, input: RememberInput, now: number): Promise<Remembered> {
  const settings = await settingsFor(env.DB, auth);
  const mode = recallMode(modeIdFor(env, settings));
  const type = input.type || DEFAULT_TYPE;
  if (!mode.types.some((t) => t.id === type)) {
    throw new AppError(400, 'invalid_type', `type must be one of: ${mode.types.map((t) => t.id).join(', ')}.`);
  }
  const concepts = [...new Set(input.concepts ?? [])];
  const unknown = concepts.filter((c) => !mode.conceptIds.includes(c));
  if (unknown.length) throw new AppError(400, 'invalid_concept', `unknown concept "${unknown[0]}"; use: ${mode.conceptIds.join(', ')}.`);

  const project = await ensureProject(env.DB, auth, input.project, now);
  const sessionId = await manualSession(env.DB, auth, project.id, now);
  const title = input.title || oneLine(input.text, 80);
  const narrative = input.text;
  const facts = input.facts ?? [];
  const files = [...new Set((input.files ?? []).map(normalizePath).filter(Boolean))];
  const hash = await observationHash(sessionId, { title, narrative });

  const inserted = await env.DB.prepare(
    `INSERT INTO observations (team_id, project_id, session_id, prompt_number, type, title, subtitle, facts, narrative, concepts,
        files_read, files_modified, cjk_terms, created_at, stored_at, discovery_tokens, content_hash, author_user_id, device_id, source)
     VALUES (?, ?, ?, 0, ?, ?, NULL, ?, ?, ?, ?, '[]', ?, ?, ?, 0, ?, ?, ?, 'remember')
     ON CONFLICT(session_id, content_hash) DO NOTHING RETURNING id`,
  )
    .bind(
      auth.teamId, project.id, sessionId, type, title, JSON.stringify(facts), narrative, JSON.stringify(concepts), JSON.stringify(files),
      cjkTerms(title, narrative, ...facts), now, now, hash, auth.userId, auth.deviceId,
    )
    .first<{ id: number }>();
  if (!inserted) {
    const existing = await env.DB.prepare('SELECT id FROM observations WHERE session_id = ? AND content_hash = ?').bind(sessionId, hash).first<{ id: number }>();
    if (!existing) throw new Error('duplicate observation vanished');
    return { id: existing.id, project: project.key, duplicate: true };
  }
  if (files.length) {
    await env.DB.batch(
      files.map((path) =>
        env.DB.prepare(`INSERT OR IGNORE INTO observation_files (observation_id, team_id, project_id, path, kind) VALUES (?, ?, ?, ?, 'read')`).bind(
          inserted.id, auth.teamId, project.id, path,
        ),
      ),
    );
  }
  return { id: inserted.id, project: project.key, duplicate: false };
}
