// Viewer read model: feed items (observations and summaries) loaded through the shared visibility predicate.
import { visibleObservations, visibleSummaries, type Viewer } from '../db/visibility';
import type { FeedItem, ObservationItem, SessionView, SummaryItem } from './types';

export type { FeedItem, ObservationItem, SessionView, SummaryItem } from './types';

/** Position in the feed: items sort by createdAt desc, then summaries before observations, then id desc. */
export interface FeedCursor {
  createdAt: number;
  kind: FeedItem['kind'];
  id: number;
}

export interface FeedFilter {
  /** null = every project the viewer may see. */
  projectIds: number[] | null;
  type: string | null;
  author: string | null;
  before: FeedCursor | null;
  limit: number;
}

// Columns are aliased to the FeedItem field names, so rows are items as they come; the joins give key and handle.
const OBS_FROM = `SELECT 'observation' AS kind, o.id, o.session_id AS sessionId, o.project_id AS projectId, p.key AS projectKey,
  o.type, o.title, o.subtitle, u.handle AS author, o.prompt_number AS promptNumber, o.created_at AS createdAt
  FROM observations o JOIN projects p ON p.id = o.project_id JOIN users u ON u.id = o.author_user_id`;
const SUM_FROM = `SELECT 'summary' AS kind, s.id, s.session_id AS sessionId, s.project_id AS projectId, p.key AS projectKey,
  u.handle AS author, s.prompt_number AS promptNumber, s.created_at AS createdAt, s.request, s.investigated, s.learned,
  s.completed, s.next_steps AS nextSteps, s.notes
  FROM summaries s JOIN projects p ON p.id = s.project_id JOIN users u ON u.id = s.author_user_id`;

/** Visible observations matching `where` (alias `o`), in `order`. */
async function selectObservations(db: D1Database, viewer: Viewer, where: string[], params: (string | number)[], order: string): Promise<ObservationItem[]> {
  const vis = visibleObservations(viewer, 'o');
  const sql = `${OBS_FROM} WHERE ${[vis.sql, ...where].join(' AND ')} ${order}`;
  return (await db.prepare(sql).bind(...vis.params, ...params).all<ObservationItem>()).results;
}

/** Visible summaries matching `where` (alias `s`), in `order`. */
async function selectSummaries(db: D1Database, viewer: Viewer, where: string[], params: (string | number)[], order: string): Promise<SummaryItem[]> {
  const vis = visibleSummaries(viewer, 's');
  const sql = `${SUM_FROM} WHERE ${[vis.sql, ...where].join(' AND ')} ${order}`;
  return (await db.prepare(sql).bind(...vis.params, ...params).all<SummaryItem>()).results;
}

const KIND_RANK: Record<FeedItem['kind'], number> = { summary: 1, observation: 0 };

/** Feed order: newest first; at equal times summaries first; then higher ids first. */
export function compareItems(a: FeedItem | FeedCursor, b: FeedItem | FeedCursor): number {
  return b.createdAt - a.createdAt || KIND_RANK[b.kind] - KIND_RANK[a.kind] || b.id - a.id;
}

/** `1733000000000` (strictly before that time) or `1733000000000_o42` / `_s7` (strictly after that item). */
export function parseCursor(raw: string): FeedCursor | null {
  const m = /^(\d{1,15})(?:_([os])(\d{1,15}))?$/.exec(raw);
  if (!m) return null;
  const createdAt = Number(m[1]);
  // A bare time sorts after every item at that time: the lowest kind with id 0.
  if (!m[2]) return { createdAt, kind: 'observation', id: 0 };
  return { createdAt, kind: m[2] === 's' ? 'summary' : 'observation', id: Number(m[3]) };
}

export const formatCursor = (c: FeedCursor) => `${c.createdAt}_${c.kind === 'summary' ? 's' : 'o'}${c.id}`;

/** WHERE fragment for the rows of one table that come after the cursor in feed order. */
function afterCursor(alias: string, kind: FeedItem['kind'], c: FeedCursor): { sql: string; params: number[] } {
  const rank = KIND_RANK[kind] - KIND_RANK[c.kind];
  // Same time: a lower-ranked kind comes after entirely, a higher-ranked one never does, the same kind by id.
  const idBound = rank < 0 ? Number.MAX_SAFE_INTEGER : rank > 0 ? 0 : c.id;
  return {
    sql: `(${alias}.created_at < ? OR (${alias}.created_at = ? AND ${alias}.id < ?))`,
    params: [c.createdAt, c.createdAt, idBound],
  };
}

function commonFilters(alias: string, kind: FeedItem['kind'], f: FeedFilter) {
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (f.projectIds) {
    // One JSON parameter for the whole list: D1 allows at most 100 bound parameters per statement.
    where.push(`${alias}.project_id IN (SELECT value FROM json_each(?))`);
    params.push(JSON.stringify(f.projectIds));
  }
  if (f.author) {
    where.push('u.handle = ?');
    params.push(f.author);
  }
  if (f.before) {
    const c = afterCursor(alias, kind, f.before);
    where.push(c.sql);
    params.push(...c.params);
  }
  return { where, params };
}

/** One page of the feed, newest first, plus the cursor of the next page (null at the end). */
export async function loadFeed(db: D1Database, viewer: Viewer, f: FeedFilter): Promise<{ items: FeedItem[]; next: string | null }> {
  if (f.projectIds && f.projectIds.length === 0) return { items: [], next: null };
  const wantSummaries = f.type === null || f.type === 'summary';
  const wantObservations = f.type !== 'summary';
  const queries: Promise<FeedItem[]>[] = [];
  if (wantObservations) {
    const c = commonFilters('o', 'observation', f);
    if (f.type) {
      c.where.push('o.type = ?');
      c.params.push(f.type);
    }
    queries.push(selectObservations(db, viewer, c.where, [...c.params, f.limit + 1], 'ORDER BY o.created_at DESC, o.id DESC LIMIT ?'));
  }
  if (wantSummaries) {
    const c = commonFilters('s', 'summary', f);
    queries.push(selectSummaries(db, viewer, c.where, [...c.params, f.limit + 1], 'ORDER BY s.created_at DESC, s.id DESC LIMIT ?'));
  }
  const merged = (await Promise.all(queries)).flat().sort(compareItems);
  const items = merged.slice(0, f.limit);
  const last = items[items.length - 1];
  return { items, next: merged.length > f.limit && last ? formatCursor(last) : null };
}

/** The given rows, each only if the viewer may read it (used by the live hub to re-check every notice). */
export async function loadItemsByIds(db: D1Database, viewer: Viewer, observationIds: number[], summaryIds: number[]): Promise<FeedItem[]> {
  const [observations, summaries] = await Promise.all([
    observationIds.length ? selectObservations(db, viewer, ['o.id IN (SELECT value FROM json_each(?))'], [JSON.stringify(observationIds)], '') : [],
    summaryIds.length ? selectSummaries(db, viewer, ['s.id IN (SELECT value FROM json_each(?))'], [JSON.stringify(summaryIds)], '') : [],
  ]);
  const out: FeedItem[] = [...observations, ...summaries];
  return out.sort(compareItems).reverse();
}

/** A session with its summaries and observations, oldest first; null when missing or not visible. */
export async function loadSession(db: D1Database, viewer: Viewer, sessionId: number): Promise<SessionView | null> {
  const session = await db
    .prepare(
      `SELECT s.id, p.key AS project_key, u.handle AS author, s.platform, s.prompt_count, s.started_at, s.ended_at
         FROM sessions s JOIN projects p ON p.id = s.project_id JOIN users u ON u.id = s.user_id
        WHERE s.id = ? AND s.team_id = ? AND p.team_id = ? AND (p.visibility = 'team' OR p.owner_user_id = ?)`,
    )
    .bind(sessionId, viewer.teamId, viewer.teamId, viewer.userId)
    .first<{ id: number; project_key: string; author: string; platform: string; prompt_count: number; started_at: number; ended_at: number | null }>();
  if (!session) return null;
  const [observations, summaries] = await Promise.all([
    selectObservations(db, viewer, ['o.session_id = ?'], [sessionId], 'ORDER BY o.created_at, o.id LIMIT 500'),
    selectSummaries(db, viewer, ['s.session_id = ?'], [sessionId], 'ORDER BY s.created_at, s.id LIMIT 100'),
  ]);
  return {
    session: {
      id: session.id,
      projectKey: session.project_key,
      author: session.author,
      platform: session.platform,
      promptCount: session.prompt_count,
      startedAt: session.started_at,
      endedAt: session.ended_at,
    },
    observations,
    summaries,
  };
}
