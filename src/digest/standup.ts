// `cairn standup` (issue 36): what I, or the team, did in a window, from summaries and observations, grouped by
// project and person, with ids. Read as the caller may read it (the one visibility rule), held rows of others left
// out; personal memory is not work and stays out.
import * as z from 'zod';
import type { AuthContext } from '../auth/types';
import { resolveVisibleProjects } from '../db/projects';
import { directoryDb, teamDb } from '../db/shards';
import { settingsFor } from '../db/team-settings';
import { viewerOf } from '../db/visibility';
import type { CairnEnv } from '../env';
import { AppError } from '../lib/errors';
import { isTimeZone } from '../recall/format';
import { dayRows } from './queries';
import { groupDay, renderStandup, type DayGroup } from './render';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The longest window a standup reads. */
export const MAX_WINDOW_MS = 31 * DAY;

/**
 * `1d`, `12h`, `2w` (ago), or an ISO date/time: where the window starts; bounded to 31 days before `now`. Null for
 * anything else.
 */
export function parseSince(raw: string, now: number): number | null {
  const t = raw.trim();
  const rel = /^(\d{1,4})([hdw])$/.exec(t);
  let from: number;
  if (rel) from = now - Number(rel[1]) * (rel[2] === 'h' ? HOUR : rel[2] === 'd' ? DAY : 7 * DAY);
  else if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+Z?)?$/.test(t)) from = Date.parse(t.length === 10 ? `${t}T00:00:00Z` : t);
  else return null;
  if (!Number.isFinite(from) || from >= now) return null;
  return Math.max(from, now - MAX_WINDOW_MS);
}

export const StandupQuery = z.object({
  since: z.string().max(40).optional(),
  team: z.enum(['1', 'true', '0', 'false']).optional(),
  project: z.string().trim().min(1).max(500).optional(),
  format: z.enum(['json', 'text']).optional(),
  tz: z
    .string()
    .optional()
    .transform((v) => v?.trim() || 'UTC')
    .refine((v) => v.length <= 64 && isTimeZone(v), { message: 'expected an IANA time zone such as Europe/Berlin' }),
});
export type StandupQuery = z.infer<typeof StandupQuery>;

export interface Standup {
  from: string;
  until: string;
  scope: 'me' | 'team';
  project: string | null;
  projects: DayGroup[];
  more: boolean;
  text: string;
}

export async function standupFor(env: CairnEnv, auth: AuthContext, q: StandupQuery, now: number): Promise<Standup> {
  const from = parseSince(q.since ?? '1d', now);
  if (from === null)
    throw new AppError(400, 'invalid_query', 'since: give 12h, 1d, 2w or an ISO date within the last 31 days.');
  const team = q.team === '1' || q.team === 'true';
  const [settings, d] = await Promise.all([settingsFor(directoryDb(env), auth), teamDb(env, auth.teamId)]);
  const viewer = { ...viewerOf(auth, settings), seesHeld: false };
  let projectId: number | null = null;
  if (q.project) {
    const [p] = await resolveVisibleProjects(d, auth, [q.project]);
    if (!p) throw new AppError(404, 'not_found', `No project "${q.project.slice(0, 200)}".`);
    projectId = p.id;
  }
  const rows = await dayRows(d, viewer, { from, until: now, author: team ? null : auth.userId, projectId });
  const projects = groupDay(rows);
  const text = renderStandup(projects, {
    who: team ? 'team' : auth.handle,
    from,
    until: now,
    timeZone: q.tz,
    more: rows.more,
  });
  return {
    from: new Date(from).toISOString(),
    until: new Date(now).toISOString(),
    scope: team ? 'team' : 'me',
    project: q.project ?? null,
    projects,
    more: rows.more,
    text,
  };
}
