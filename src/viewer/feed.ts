// Viewer read model: feed items (observations and summaries) loaded through the shared visibility predicate.
import { visibleObservations, visibleSummaries, type Viewer } from '../db/visibility';

export interface ObservationItem {
  kind: 'observation';
  id: number;
  sessionId: number;
  projectId: number;
  projectKey: string;
  type: string;
  title: string | null;
  subtitle: string | null;
  author: string;
  promptNumber: number;
  createdAt: number;
}

export interface SummaryItem {
  kind: 'summary';
  id: number;
  sessionId: number;
  projectId: number;
  projectKey: string;
  author: string;
  promptNumber: number;
  createdAt: number;
  request: string;
  investigated: string;
  learned: string;
  completed: string;
  nextSteps: string;
  notes: string | null;
}

export type FeedItem = ObservationItem | SummaryItem;

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

const OBS_COLUMNS = `'observation' AS kind, o.id, o.session_id, o.project_id, p.key AS project_key, o.type, o.title, o.subtitle,
  u.handle AS author, o.prompt_number, o.created_at`;
const SUM_COLUMNS = `'summary' AS kind, s.id, s.session_id, s.project_id, p.key AS project_key, u.handle AS author, s.prompt_number,
  s.created_at, s.request, s.investigated, s.learned, s.completed, s.next_steps, s.notes`;

interface ObsRow {
  kind: 'observation';
  id: number;
  session_id: number;
  project_id: number;
  project_key: string;
  type: string;
  title: string | null;
  subtitle: string | null;
  author: string;
  prompt_number: number;
  created_at: number;
}

interface SumRow {
  kind: 'summary';
  id: number;
  session_id: number;
  project_id: number;
  project_key: string;
  author: string;
  prompt_number: number;
  created_at: number;
  request: string;
  investigated: string;
  learned: string;
  completed: string;
  next_steps: string;
  notes: string | null;
}

const toObs = (r: ObsRow): ObservationItem => ({
  kind: 'observation',
  id: r.id,
  sessionId: r.session_id,
  projectId: r.project_id,
  projectKey: r.project_key,
  type: r.type,
  title: r.title,
  subtitle: r.subtitle,
  author: r.author,
  promptNumber: r.prompt_number,
  createdAt: r.created_at,
});

const toSum = (r: SumRow): SummaryItem => ({
  kind: 'summary',
  id: r.id,
  sessionId: r.session_id,
  projectId: r.project_id,
  projectKey: r.project_key,
  author: r.author,
  promptNumber: r.prompt_number,
  createdAt: r.created_at,
  request: r.request,
  investigated: r.investigated,
  learned: r.learned,
  completed: r.completed,
  nextSteps: r.next_steps,
  notes: r.notes,
});

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

const inList = (n: number) => Array.from({ length: n }, () => '?').join(', ');

function commonFilters(alias: string, kind: FeedItem['kind'], f: FeedFilter) {
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (f.projectIds) {
    where.push(`${alias}.project_id IN (${inList(f.projectIds.length)})`);
    params.push(...f.projectIds);
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
    const vis = visibleObservations(viewer, 'o');
    const c = commonFilters('o', 'observation', f);
    if (f.type) {
      c.where.push('o.type = ?');
      c.params.push(f.type);
    }
    const sql = `SELECT ${OBS_COLUMNS} FROM observations o JOIN projects p ON p.id = o.project_id JOIN users u ON u.id = o.author_user_id
      WHERE ${[vis.sql, ...c.where].join(' AND ')} ORDER BY o.created_at DESC, o.id DESC LIMIT ?`;
    queries.push(db.prepare(sql).bind(...vis.params, ...c.params, f.limit + 1).all<ObsRow>().then((r) => r.results.map(toObs)));
  }
  if (wantSummaries) {
    const vis = visibleSummaries(viewer, 's');
    const c = commonFilters('s', 'summary', f);
    const sql = `SELECT ${SUM_COLUMNS} FROM summaries s JOIN projects p ON p.id = s.project_id JOIN users u ON u.id = s.author_user_id
      WHERE ${[vis.sql, ...c.where].join(' AND ')} ORDER BY s.created_at DESC, s.id DESC LIMIT ?`;
    queries.push(db.prepare(sql).bind(...vis.params, ...c.params, f.limit + 1).all<SumRow>().then((r) => r.results.map(toSum)));
  }
  const merged = (await Promise.all(queries)).flat().sort(compareItems);
  const items = merged.slice(0, f.limit);
  const last = items[items.length - 1];
  return { items, next: merged.length > f.limit && last ? formatCursor(last) : null };
}

/** The given rows, each only if the viewer may read it (used by the live hub to re-check every notice). */
export async function loadItemsByIds(db: D1Database, viewer: Viewer, observationIds: number[], summaryIds: number[]): Promise<FeedItem[]> {
  const out: FeedItem[] = [];
  if (observationIds.length) {
    const vis = visibleObservations(viewer, 'o');
    const rows = await db
      .prepare(
        `SELECT ${OBS_COLUMNS} FROM observations o JOIN projects p ON p.id = o.project_id JOIN users u ON u.id = o.author_user_id
          WHERE ${vis.sql} AND o.id IN (${inList(observationIds.length)})`,
      )
      .bind(...vis.params, ...observationIds)
      .all<ObsRow>();
    out.push(...rows.results.map(toObs));
  }
  if (summaryIds.length) {
    const vis = visibleSummaries(viewer, 's');
    const rows = await db
      .prepare(
        `SELECT ${SUM_COLUMNS} FROM summaries s JOIN projects p ON p.id = s.project_id JOIN users u ON u.id = s.author_user_id
          WHERE ${vis.sql} AND s.id IN (${inList(summaryIds.length)})`,
      )
      .bind(...vis.params, ...summaryIds)
      .all<SumRow>();
    out.push(...rows.results.map(toSum));
  }
  return out.sort(compareItems).reverse();
}

export interface SessionView {
  session: { id: number; projectKey: string; author: string; platform: string; promptCount: number; startedAt: number; endedAt: number | null };
  summaries: SummaryItem[];
  observations: ObservationItem[];
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
  const ov = visibleObservations(viewer, 'o');
  const sv = visibleSummaries(viewer, 's');
  const [obs, sums] = await Promise.all([
    db
      .prepare(
        `SELECT ${OBS_COLUMNS} FROM observations o JOIN projects p ON p.id = o.project_id JOIN users u ON u.id = o.author_user_id
          WHERE ${ov.sql} AND o.session_id = ? ORDER BY o.created_at, o.id LIMIT 500`,
      )
      .bind(...ov.params, sessionId)
      .all<ObsRow>(),
    db
      .prepare(
        `SELECT ${SUM_COLUMNS} FROM summaries s JOIN projects p ON p.id = s.project_id JOIN users u ON u.id = s.author_user_id
          WHERE ${sv.sql} AND s.session_id = ? ORDER BY s.created_at, s.id LIMIT 100`,
      )
      .bind(...sv.params, sessionId)
      .all<SumRow>(),
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
    observations: obs.results.map(toObs),
    summaries: sums.results.map(toSum),
  };
}
