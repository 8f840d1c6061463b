// The one read-visibility predicate for memory rows: team, visible projects, not deleted, sensitive rule.
import type { Caller } from './caller';
import { settingsFor, type TeamSettings } from './team-settings';

/** Observation types that only their author may read unless the team sets `share_sensitive: true`. */
export const SENSITIVE_TYPES = ['sensitive'] as const;

/** Who is reading, with the team's sensitive-sharing setting already resolved. */
export interface Viewer {
  teamId: number;
  userId: number;
  shareSensitive: boolean;
}

/** A WHERE fragment with anonymous `?` placeholders and its binds, in order. Combine with AND. */
export interface SqlFragment {
  sql: string;
  params: (string | number)[];
}

/** The Viewer for settings the caller already loaded. */
export function viewerOf(auth: Pick<Caller, 'teamId' | 'userId'>, settings: TeamSettings): Viewer {
  return { teamId: auth.teamId, userId: auth.userId, shareSensitive: settings.share_sensitive === true };
}

/** Resolves the sensitive-sharing setting (read with the token); pass the Viewer to the `visible*` builders below. */
export async function loadViewer(db: D1Database, auth: Pick<Caller, 'teamId' | 'userId' | 'settings'>): Promise<Viewer> {
  return viewerOf(auth, await settingsFor(db, auth));
}

const projectClause = (a: string) =>
  `${a}.project_id IN (SELECT id FROM projects WHERE team_id = ? AND (visibility = 'team' OR owner_user_id = ?))`;

/**
 * Observations the viewer may read: `alias.team_id` is theirs, the project is team-visible or theirs,
 * `deleted_at IS NULL`, and `sensitive` rows only when they wrote them (or the team shares them).
 * Usage: `WHERE ${f.sql} AND o.project_id IN (…)` with `.bind(...f.params, …)`. Uses `?` placeholders only,
 * so do not mix it with numbered `?1` placeholders in the same statement.
 */
export function visibleObservations(v: Viewer, alias = 'o'): SqlFragment {
  const sensitive = v.shareSensitive
    ? ''
    : ` AND (${alias}.type NOT IN (${SENSITIVE_TYPES.map(() => '?').join(', ')}) OR ${alias}.author_user_id = ?)`;
  return {
    sql: `${alias}.team_id = ? AND ${alias}.deleted_at IS NULL AND ${projectClause(alias)}${sensitive}`,
    params: [v.teamId, v.teamId, v.userId, ...(v.shareSensitive ? [] : [...SENSITIVE_TYPES, v.userId])],
  };
}

/** Session summaries the viewer may read (team, visible project, not deleted). */
export function visibleSummaries(v: Viewer, alias = 's'): SqlFragment {
  return { sql: `${alias}.team_id = ? AND ${alias}.deleted_at IS NULL AND ${projectClause(alias)}`, params: [v.teamId, v.teamId, v.userId] };
}

/** User prompts the viewer may read (team, visible project). Prompts have no soft delete. */
export function visiblePrompts(v: Viewer, alias = 'p'): SqlFragment {
  return { sql: `${alias}.team_id = ? AND ${projectClause(alias)}`, params: [v.teamId, v.teamId, v.userId] };
}
