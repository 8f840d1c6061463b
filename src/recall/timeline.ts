// Timeline queries: resolve an anchor the caller may read, then the observations and summaries around it.
import {
  OBS_RANK,
  observationsBeside,
  SUM_RANK,
  summariesBeside,
  timelineObservation,
  timelineSummary,
  type Side,
  type TimelineKey,
  type TimelineObservationRow,
  type TimelineSummaryRow,
} from './queries';
import type { Viewer } from '../db/visibility';
import { AppError } from '../lib/errors';
import type { Anchor, TimelineItem, TimelineResult } from './render-timeline';

/** Order of everything on a timeline: time, then observations before summaries, then id. */
type Key = TimelineKey;

/** A bare moment sorts after everything stamped at that same millisecond. */
const TIME_RANK = 2;

const obsItem = (r: TimelineObservationRow, anchor = false): TimelineItem => ({
  kind: 'observation',
  id: r.id,
  at: r.at,
  type: r.type,
  title: r.title,
  project: r.project,
  author: r.author,
  tokens: r.tokens,
  anchor,
});
const sumItem = (r: TimelineSummaryRow, anchor = false): TimelineItem => ({
  kind: 'summary',
  id: r.id,
  at: r.at,
  request: r.request,
  project: r.project,
  author: r.author,
  anchor,
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
  let anchorKey: Key;
  let anchorItem: TimelineItem | null = null;
  let projectIds = q.projectIds;
  if (q.anchor.kind === 'time') {
    anchorKey = [q.anchor.at, TIME_RANK, 0];
  } else {
    const row =
      q.anchor.kind === 'observation'
        ? await timelineObservation(db, viewer, q.anchor.id, projectIds)
        : await timelineSummary(db, viewer, q.anchor.id, projectIds);
    if (!row) throw anchorNotFound();
    anchorItem = 'type' in row ? obsItem(row, true) : sumItem(row, true);
    anchorKey = keyOf(anchorItem);
    projectIds ??= [row.projectId];
  }

  const scopes: (number | null)[] = projectIds ?? [null];
  const side = async (dir: Side, limit: number): Promise<TimelineItem[]> => {
    if (limit <= 0) return [];
    const parts = await Promise.all(
      scopes.flatMap((pid) => [
        observationsBeside(db, viewer, pid, dir, anchorKey, limit).then((rows) => rows.map((r) => obsItem(r))),
        summariesBeside(db, viewer, pid, dir, anchorKey, limit).then((rows) => rows.map((r) => sumItem(r))),
      ]),
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
