// Health you can see: the team's (admins), the server's (the operator), the observer's state in short (every
// device: `cairn status`, the status line, the viewer), and the admin's "try the observer again now".
import { Hono } from 'hono';
import { writeAudit } from '../audit/audit';
import type { AppEnv } from '../auth/types';
import { teamDb } from '../db/shards';
import { wakeSessions } from '../session/session-do';
import { teamStub } from '../slots/team-do';
import * as z from 'zod';
import { query } from '../lib/validate';
import { healthOfServer, healthOfTeam, OPERATOR_PAGE_MAX, observerStateJson, operatorPageLimit } from './report';

/** Mounted at /api/admin/health (admin guard at the mount). */
export const adminHealthRoutes = new Hono<AppEnv>().get('/', async (c) =>
  c.json(await healthOfTeam(c.env, c.get('auth').teamId, Date.now())),
);

/**
 * Mounted at /api/admin/observer (admin guard). `POST /retry`: the observer's next try is now (a key fixed,
 * a cap raised); the sessions that wait with work are woken, and the first of them is the probe. A key still
 * refused answers as before and the team goes on failing, probing every few minutes.
 */
export const observerAdminRoutes = new Hono<AppEnv>().post('/retry', async (c) => {
  const auth = c.get('auth');
  const now = Date.now();
  const team = teamStub(c.env, auth.teamId);
  const waiting = await team.clearBackoff(now);
  await wakeSessions(c.env, auth.teamId, waiting);
  await writeAudit(await teamDb(c.env, auth.teamId), {
    teamId: auth.teamId,
    actorUserId: auth.userId,
    action: 'observer.retry',
    detail: { woken: waiting.length },
    at: now,
  });
  return c.json({ woken: waiting.length, observer: observerStateJson(await team.health(now)) });
});

/** Mounted at /api/observer/state (any device token): one Durable Object call, no D1 read. */
export const observerStateRoutes = new Hono<AppEnv>().get('/', async (c) =>
  c.json(observerStateJson(await teamStub(c.env, c.get('auth').teamId).health(Date.now()))),
);

/** `?cursor=` (the `next_cursor` of the page before) and `?limit=` (teams a page: operatorPageLimit). */
const OperatorHealthQuery = z.object({
  cursor: z
    .string()
    .regex(/^\d{1,15}$/, 'cursor: the next_cursor of the page before')
    .optional(),
  limit: z.coerce.number().int().min(1).max(OPERATOR_PAGE_MAX).optional(),
});

/** Mounted at /api/admin/teams/health behind the operator's secret (CAIRN_ADMIN_SECRET): a page of teams a request. */
export const operatorHealthRoutes = new Hono<AppEnv>().get('/', query(OperatorHealthQuery), async (c) => {
  const q = c.req.valid('query');
  const page = { afterId: Number(q.cursor ?? 0), limit: operatorPageLimit(c.env, q.limit) };
  return c.json(await healthOfServer(c.env, Date.now(), page));
});
