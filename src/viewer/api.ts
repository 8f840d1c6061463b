// Token-authenticated data routes for the browser viewer: who am I, feed, session, authors, live stream.
import { Hono } from 'hono';
import * as z from 'zod';
import type { AuthContext } from '../auth/types';
import { resolveVisibleProjects } from '../db/projects';
import { sessionIdByKey, teamHandles } from '../feed/queries';
import { loadViewer } from '../db/visibility';
import type { AppEnv } from '../auth/types';
import type { CairnEnv } from '../env';
import { AppError, notFound } from '../lib/errors';
import { parseWith, query } from '../lib/validate';
import { hubStub } from '../live/hub-do';
import { loadFeed, loadSession, parseCursor } from '../feed/feed';
import { teamDb } from '../db/shards';
import { sessionReceipts } from '../receipts/service';
import type { SessionView } from '#shared/wire/feed';

/** Mounted at /api/viewer (scope `read`, declared in src/app.ts). */
export const viewerApi = new Hono<AppEnv>();
/** Mounted at /api/live (scope `read`). */
export const liveRoutes = new Hono<AppEnv>();

const projectKey = z.string().trim().min(1).max(300);

/** Project keys → ids the caller may read. No keys = all (null). Unknown and invisible keys look the same. */
async function projectFilter(env: CairnEnv, auth: AuthContext, keys: string[]): Promise<number[] | null> {
  if (keys.length === 0) return null;
  const refs = await resolveVisibleProjects(await teamDb(env, auth.teamId), auth, keys);
  if (refs.length === 0) throw notFound('project');
  return refs.map((r) => r.id);
}

viewerApi.get('/me', (c) => {
  const a = c.get('auth');
  return c.json({ team: a.teamSlug, handle: a.handle, role: a.role, device: a.deviceName });
});

export const FeedQuery = z.object({
  project: z.array(projectKey).max(10).default([]),
  before: z.string().max(40).optional(),
  type: z
    .string()
    .regex(/^[a-z][a-z0-9_-]{0,39}$/, 'must be a lowercase type name')
    .optional(),
  author: z.string().trim().min(1).max(100).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(40),
});
export type FeedQuery = z.infer<typeof FeedQuery>;

viewerApi.get('/feed', query(FeedQuery, { lists: ['project'], blankIsAbsent: true }), async (c) => {
  const q = c.req.valid('query');
  const before = q.before === undefined ? null : parseCursor(q.before);
  if (q.before !== undefined && !before)
    throw new AppError(400, 'invalid_query', 'before: must be a time in ms or a cursor from a previous page.');
  const auth = c.get('auth');
  const d = await teamDb(c.env, auth.teamId);
  const [projectIds, viewer] = await Promise.all([projectFilter(c.env, auth, q.project), loadViewer(d, auth)]);
  const page = await loadFeed(d, viewer, {
    projectIds,
    type: q.type ?? null,
    author: q.author ?? null,
    before,
    limit: q.limit,
  });
  return c.json(page);
});

const SessionParam = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/**
 * A session and the memories that went into it (its receipts), each only if the reader may read it: a record of
 * someone's private project never shows on a session page another member opens.
 */
async function sessionPage(env: CairnEnv, auth: AuthContext, id: number | undefined): Promise<SessionView> {
  const d = await teamDb(env, auth.teamId);
  const viewer = await loadViewer(d, auth);
  const view = id === undefined ? null : await loadSession(d, viewer, id);
  if (!view) throw notFound('session');
  return { ...view, receipts: await sessionReceipts(d, viewer, view.session.key) };
}

viewerApi.get('/sessions/:id', async (c) => {
  const id = parseWith(SessionParam, c.req.param('id'));
  return c.json(await sessionPage(c.env, c.get('auth'), id));
});

/** A session by its agent-side key (what full observation records carry). */
const SessionKeyQuery = z.object({ key: z.string().trim().min(1).max(200) });

viewerApi.get('/sessions', query(SessionKeyQuery), async (c) => {
  const { key } = c.req.valid('query');
  const auth = c.get('auth');
  const id = await sessionIdByKey(await teamDb(c.env, auth.teamId), auth.teamId, key);
  return c.json(await sessionPage(c.env, auth, id));
});

viewerApi.get('/authors', async (c) => {
  const { teamId } = c.get('auth');
  return c.json({ authors: await teamHandles(await teamDb(c.env, teamId), teamId) });
});

/**
 * Server-sent events through the team's HubDO. Browsers read it with fetch() so the token travels in the
 * Authorization header, never in the URL. Events: `ready`, `item` (a feed item), `bye` (reconnect).
 */
const LiveQuery = z.object({ project: z.array(projectKey).max(10) });

liveRoutes.get('/', query(LiveQuery, { lists: ['project'] }), async (c) => {
  const keys = c.req.valid('query').project;
  const auth = c.get('auth');
  const projectIds = await projectFilter(c.env, auth, keys);
  const hub = hubStub(c.env, auth.teamId);
  const stream = await hub.subscribe(auth.teamId, { userId: auth.userId, projectIds });
  return new Response(stream as ReadableStream, {
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    },
  });
});
