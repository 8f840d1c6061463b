// Viewer read model: feed pages and cursors over the queries in feed/queries.ts (every row through the one
// visibility rule).
import { compareItems, feedItemsByIds, feedPage, sessionView, type FeedCursor, type FeedFilter } from './queries';
import type { Viewer } from '../db/visibility';
import type { FeedItem, SessionView } from '#shared/wire/feed';

export { compareItems, type FeedCursor, type FeedFilter } from './queries';

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

/** One page of the feed, newest first, plus the cursor of the next page (null at the end). */
export async function loadFeed(
  db: D1Database,
  viewer: Viewer,
  f: FeedFilter,
): Promise<{ items: FeedItem[]; next: string | null }> {
  if (f.projectIds && f.projectIds.length === 0) return { items: [], next: null };
  const merged = await feedPage(db, viewer, f);
  const items = merged.slice(0, f.limit);
  const last = items[items.length - 1];
  return { items, next: merged.length > f.limit && last ? formatCursor(last) : null };
}

/** The given rows, each only if the viewer may read it (used by the live hub to re-check every notice). */
export async function loadItemsByIds(
  db: D1Database,
  viewer: Viewer,
  observationIds: number[],
  summaryIds: number[],
): Promise<FeedItem[]> {
  return (await feedItemsByIds(db, viewer, observationIds, summaryIds)).sort(compareItems).reverse();
}

/**
 * A session with its summaries and observations, oldest first; null when missing or not visible. Its receipts are
 * added by the viewer's route (src/viewer/api.ts).
 */
export function loadSession(
  db: D1Database,
  viewer: Viewer,
  sessionId: number,
): Promise<Omit<SessionView, 'receipts'> | null> {
  return sessionView(db, viewer, sessionId);
}
