// Timeline queries: resolve an anchor the caller may read, then the observations and summaries around it.
import { visibleObservations, visibleSummaries, type Viewer } from '../db/visibility';
import { AppError } from '../lib/errors';
import type { Anchor, TimelineItem, TimelineResult } from './render-timeline';

/** Order of everything on a timeline: time, then observations before summaries, then id. */
type Key = [at: number, rank: number, id: number];

const OBS_RANK = 0;
const SUM_RANK = 1;
/** A bare moment sorts after everything stamped at that same millisecond. */
const TIME_RANK = 2;

const TOKENS = `CAST((length(coalesce(o.title, '')) + length(coalesce(o.subtitle, '')) + length(coalesce(o.narrative, '')) + length(o.facts) + 3) / 4 AS INTEGER)`;

const obsSelect = (index = '') => `SELECT o.id, o.created_at AS at, o.type, o.title, p.key AS project, u.handle AS author, ${TOKENS} AS tokens, o.project_id
  FROM observations o ${index} JOIN projects p ON p.id = o.project_id JOIN users u ON u.id = o.author_user_id`;
const OBS_SELECT = obsSelect();
// Without statistics SQLite prefers the team-time index even when a project is fixed; name the right one.
const OBS_SELECT_BY_PROJECT = obsSelect('INDEXED BY idx_obs_project_time');
const SUM_SELECT = `SELECT s.id, s.created_at AS at, s.request, p.key AS project, u.handle AS author, s.project_id
  FROM summaries s JOIN projects p ON p.id = s.project_id JOIN users u ON u.id = s.author_user_id`;

interface ObsRow {
  id: number;
  at: number;
  type: string;
  title: string | null;
  project: string;
  author: string;
  tokens: number;
  project_id: number;
}
interface SumRow {
  id: number;
  at: number;
  request: string;
  project: string;
  author: string;
  project_id: number;
}

const obsItem = (r: ObsRow, anchor = false): TimelineItem => ({
  kind: 'observation', id: r.id, at: r.at, type: r.type, title: r.title, project: r.project, author: r.author, tokens: r.tokens, anchor,
});
const sumItem = (r: SumRow, anchor = false): TimelineItem => ({
  kind: 'summary', id: r.id, at: r.at, request: r.request, project: r.project, author: r.author, anchor,
});
const keyOf = (i: TimelineItem): Key => [i.at, i.kind === 'observation' ? OBS_RANK : SUM_RANK, i.id];
const cmp = (a: Key, b: Key) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

const anchorNotFound = () => new AppError(404, 'anchor_not_found', 'No such observation or session summary.');

export interface TimelineQuery {
  anchor: Anchor;
  before: number;
  after: number;
  /** Visible project ids to stay within; null = the anchor's project (or all visible projects for a time). */
  projectIds: number[] | null;
}

/** Throws 404 `anchor_not_found` when the anchor does not exist for this viewer (other teams' ids included). */
export async function loadTimeline(db: D1Database, viewer: Viewer, q: TimelineQuery): Promise<TimelineResult> {
  const ov = visibleObservations(viewer, 'o');
  const sv = visibleSummaries(viewer, 's');
  const inProjects = (alias: string, projectIds: number[] | null) =>
    projectIds ? { sql: ` AND ${alias}.project_id IN (SELECT value FROM json_each(?))`, params: [JSON.stringify(projectIds)] } : { sql: '', params: [] };

  let anchorKey: Key;
  let anchorItem: TimelineItem | null = null;
  let projectIds = q.projectIds;
  if (q.anchor.kind === 'time') {
    anchorKey = [q.anchor.at, TIME_RANK, 0];
  } else {
    const scope = inProjects(q.anchor.kind === 'observation' ? 'o' : 's', projectIds);
    const row =
      q.anchor.kind === 'observation'
        ? await db.prepare(`${OBS_SELECT} WHERE o.id = ? AND ${ov.sql}${scope.sql}`).bind(q.anchor.id, ...ov.params, ...scope.params).first<ObsRow>()
        : await db.prepare(`${SUM_SELECT} WHERE s.id = ? AND ${sv.sql}${scope.sql}`).bind(q.anchor.id, ...sv.params, ...scope.params).first<SumRow>();
    if (!row) throw anchorNotFound();
    anchorItem = q.anchor.kind === 'observation' ? obsItem(row as ObsRow, true) : sumItem(row as SumRow, true);
    anchorKey = keyOf(anchorItem);
    projectIds ??= [row.project_id];
  }

  // One query per project (project_id = ?) so SQLite walks the (team, project, time) index from the anchor;
  // without projects, the team's time index. The plain created_at bound lets the index start at the anchor.
  const scopes: (number | null)[] = projectIds ?? [null];
  const side = async (dir: 'before' | 'after', limit: number): Promise<TimelineItem[]> => {
    if (limit <= 0) return [];
    const op = dir === 'before' ? '<' : '>';
    const bound = dir === 'before' ? '<=' : '>=';
    const order = dir === 'before' ? 'DESC' : 'ASC';
    const parts = await Promise.all(
      scopes.flatMap((pid) => {
        const oScope = pid === null ? '' : ' AND o.project_id = ?';
        const sScope = pid === null ? '' : ' AND s.project_id = ?';
        const scopeParams = pid === null ? [] : [pid];
        return [
          db
            .prepare(
              `${pid === null ? OBS_SELECT : OBS_SELECT_BY_PROJECT} WHERE ${ov.sql}${oScope} AND o.created_at ${bound} ? AND (o.created_at, ${OBS_RANK}, o.id) ${op} (?, ?, ?)
                ORDER BY o.created_at ${order}, o.id ${order} LIMIT ?`,
            )
            .bind(...ov.params, ...scopeParams, anchorKey[0], ...anchorKey, limit)
            .all<ObsRow>()
            .then((r) => r.results.map((row) => obsItem(row))),
          db
            .prepare(
              `${SUM_SELECT} WHERE ${sv.sql}${sScope} AND s.created_at ${bound} ? AND (s.created_at, ${SUM_RANK}, s.id) ${op} (?, ?, ?)
                ORDER BY s.created_at ${order}, s.id ${order} LIMIT ?`,
            )
            .bind(...sv.params, ...scopeParams, anchorKey[0], ...anchorKey, limit)
            .all<SumRow>()
            .then((r) => r.results.map((row) => sumItem(row))),
        ];
      }),
    );
    const items = parts.flat();
    items.sort((a, b) => (dir === 'before' ? cmp(keyOf(b), keyOf(a)) : cmp(keyOf(a), keyOf(b))));
    return items.slice(0, limit);
  };

  const [before, after] = await Promise.all([side('before', q.before), side('after', q.after)]);
  const items = [...before.reverse(), ...(anchorItem ? [anchorItem] : []), ...after];
  return {
    anchor: { kind: q.anchor.kind, id: q.anchor.kind === 'time' ? null : q.anchor.id, at: anchorKey[0] },
    before: before.length,
    after: after.length,
    items,
  };
}
