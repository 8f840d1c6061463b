// Project identity and visibility: which projects a caller may see, and creating one on first ingest.
import type { Caller } from './caller';

export interface ProjectRef {
  id: number;
  key: string;
  visibility: 'team' | 'private';
  ownerUserId: number | null;
}

/**
 * Keys without a remote (`local/<folder>`) belong to one user: they are stored as `local/<handle>/<folder>`
 * so that two people's `local/app` never meet, and they are private.
 */
export function storedProjectKey(key: string, handle: string): string {
  // `#` is the server's own separator for shadow projects (`<key>#<handle>`): a client's `#` is stored escaped,
  // so no key a client sends can name a shadow.
  const k = key.trim().replace(/#/g, '%23');
  if (k.startsWith('local/') && !k.startsWith(`local/${handle}/`)) return `local/${handle}/${k.slice('local/'.length)}`;
  return k;
}

/**
 * Keys only the server makes: `local/…` (a user's own folder without a remote, `local/<handle>/…`) and any
 * key holding `#` (shadow projects). Renames, merges and visibility changes may not produce or take them.
 */
export const isReservedProjectKey = (key: string): boolean => key.trim().startsWith('local/') || key.includes('#');

/** SQL that selects the ids of projects `auth` may read. Bind: teamId, userId. */
export const VISIBLE_PROJECT_IDS_SQL = `SELECT id FROM projects WHERE team_id = ? AND (visibility = 'team' OR owner_user_id = ?)`;

export const visibleProjectParams = (auth: Caller) => [auth.teamId, auth.userId] as const;

interface ProjectRow {
  id: number;
  key: string;
  visibility: 'team' | 'private';
  owner_user_id: number | null;
}

const toRef = (r: ProjectRow): ProjectRef => ({ id: r.id, key: r.key, visibility: r.visibility, ownerUserId: r.owner_user_id });

/**
 * When a teammate works under a key that names someone else's private project, their memory goes to a
 * private project of their own under this shadow key, so the owner's project is neither written nor revealed.
 */
export const shadowProjectKey = (key: string, handle: string) => `${key}#${handle}`;

/**
 * Resolves keys (or their aliases) to projects the caller may read, including the caller's own shadow of
 * each key; unknown or invisible keys are left out.
 */
export async function resolveVisibleProjects(db: D1Database, auth: Caller, keys: string[]): Promise<ProjectRef[]> {
  const out: ProjectRef[] = [];
  for (const raw of keys.slice(0, 10)) {
    const key = storedProjectKey(raw, auth.handle);
    const rows = await db
      .prepare(
        `SELECT p.id, p.key, p.visibility, p.owner_user_id FROM projects p
          WHERE p.team_id = ?1
            AND (p.key = ?2 OR p.key = ?4 OR p.id = (SELECT project_id FROM project_aliases WHERE team_id = ?1 AND key = ?2))
            AND (p.visibility = 'team' OR p.owner_user_id = ?3)
            AND (p.key != ?4 OR (p.visibility = 'private' AND p.owner_user_id = ?3))
          ORDER BY (p.key = ?4), p.id`,
      )
      .bind(auth.teamId, key, auth.userId, shadowProjectKey(key, auth.handle))
      .all<ProjectRow>();
    for (const row of rows.results) if (!out.some((p) => p.id === row.id)) out.push(toRef(row));
  }
  return out;
}

/** Finds or creates the project an ingest event names. A private project of another user is never reused. */
export async function ensureProject(db: D1Database, auth: Caller, rawKey: string, now: number): Promise<ProjectRef> {
  const key = storedProjectKey(rawKey, auth.handle);
  const visible = await resolveVisibleProjects(db, auth, [key]);
  if (visible[0]) return visible[0];
  const created = await insertOrGet(db, auth, key, key.startsWith('local/') ? 'private' : 'team', now);
  if (created.visibility === 'team' || created.ownerUserId === auth.userId) return created;
  const shadow = await insertOrGet(db, auth, shadowProjectKey(key, auth.handle), 'private', now);
  // Only the server makes `#` keys, so this holds; checked because a write must never land elsewhere.
  if (shadow.visibility !== 'private' || shadow.ownerUserId !== auth.userId) throw new Error('shadow project is not the caller\'s own');
  return shadow;
}

async function insertOrGet(db: D1Database, auth: Caller, key: string, visibility: 'team' | 'private', now: number): Promise<ProjectRef> {
  await db
    .prepare(
      `INSERT INTO projects (team_id, key, owner_user_id, visibility, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(team_id, key) DO NOTHING`,
    )
    .bind(auth.teamId, key, auth.userId, visibility, now)
    .run();
  const row = await db
    .prepare('SELECT id, key, visibility, owner_user_id FROM projects WHERE team_id = ? AND key = ?')
    .bind(auth.teamId, key)
    .first<ProjectRow>();
  if (!row) throw new Error('project row vanished');
  return toRef(row);
}
