// The prior records an observer turn is shown (src/observer/prior.ts): current observations of one project that
// the session's author may read, touching the turn's files or matching its words. Two or three bounded reads.
import { and, eq, isNull, ne } from 'drizzle-orm';
import { alias } from 'drizzle-orm/sqlite-core';
import { notPendingReview } from './corrections';
import { db, type Db } from './client';
import { ftsRanked, observationsTouching, recordScope, type RecordScope } from './fts';
import { observations, users } from './schema';
import { byIds, notInJsonList, prefixOfFirst } from './sqlite';
import { canReadObservation, type Viewer } from './visibility';

export interface RelatedRow {
  id: number;
  type: string;
  title: string | null;
  gist: string | null;
  createdAt: number;
  author: string;
}

export interface RelatedQuery {
  /** Paths the turn's calls named (exact, or a stored path ending in "/<path>"). */
  paths: string[];
  /** MATCH expressions built by search/fts-query.ts; null when the turn has no usable words. */
  match: { all: string; any: string } | null;
  weights: readonly number[];
  /** Ids left out (already shown in this conversation). */
  exclude: number[];
  /** The turn's own session: its rows are already in the observer's history (showing them again costs tokens twice). */
  sessionId: number;
}

// The alias recordScope's statements read observations by (db/fts.ts): extra terms name its columns.
const o = alias(observations, 'o');

/**
 * Current records (not superseded, not merged into another, not pending review) of `projectId` the viewer may read,
 * from sessions other than `sessionId`.
 */
function currentScope(viewer: Viewer, projectId: number, sessionId: number, exclude: number[]): RecordScope {
  const base = recordScope('observation', viewer, {
    projectIds: [projectId],
    type: [],
    concept: [],
    file: [],
    author: [],
    platform: [],
  });
  const where = and(
    base.where,
    isNull(o.supersededBy),
    isNull(o.mergedInto),
    ne(o.sessionId, sessionId),
    notPendingReview(viewer.teamId, o.id),
    exclude.length ? notInJsonList(o.id, exclude) : undefined,
  );
  return { ...base, where: where! };
}

/**
 * Up to `limit` related records, file matches first (newest first), then keyword matches (bm25), at most
 * `keywordLimit` of those. Each read is bounded by its limit.
 */
export async function relatedRecords(
  d1: D1Database,
  viewer: Viewer,
  projectId: number,
  q: RelatedQuery,
  limit: number,
  keywordLimit: number,
): Promise<RelatedRow[]> {
  const scope = currentScope(viewer, projectId, q.sessionId, q.exclude);
  const byFile = q.paths.length ? await observationsTouching(d1, q.paths, scope, limit) : [];
  const ids = [...byFile];
  if (q.match && ids.length < limit) {
    const ranked = await ftsRanked(d1, scope, q.match, q.weights, limit + keywordLimit);
    let added = 0;
    for (const r of ranked.rows) {
      if (ids.length >= limit || added >= keywordLimit) break;
      if (ids.includes(r.id)) continue;
      ids.push(r.id);
      added++;
    }
  }
  if (!ids.length) return [];
  return rowsOf(db(d1), viewer, projectId, ids);
}

async function rowsOf(d: Db, viewer: Viewer, projectId: number, ids: number[]): Promise<RelatedRow[]> {
  const t = observations;
  const rows = await d
    .select({
      id: t.id,
      type: t.type,
      title: t.title,
      // A bounded prefix: the renderer shows ~200 characters of it.
      gist: prefixOfFirst(600, [t.narrative, t.subtitle], t.facts),
      createdAt: t.createdAt,
      author: users.handle,
    })
    .from(t)
    .innerJoin(users, eq(users.id, t.authorUserId))
    .where(byIds(t.id, ids, and(canReadObservation(viewer), eq(t.projectId, projectId), isNull(t.supersededBy))));
  const at = new Map(ids.map((id, i) => [id, i]));
  return rows.sort((a, b) => at.get(a.id)! - at.get(b.id)!);
}
