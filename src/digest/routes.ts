// The team's day over HTTP (issue 36): GET /api/standup (scope `read` or `ingest`), what `cairn standup` prints.
import { Hono } from 'hono';
import type { AppEnv } from '../auth/types';
import { query } from '../lib/validate';
import { standupFor, StandupQuery } from './standup';

/** Mounted at /api/standup (src/app.ts). */
export const standupRoutes = new Hono<AppEnv>();

standupRoutes.get('/', query(StandupQuery), async (c) => {
  const q = c.req.valid('query');
  const s = await standupFor(c.env, c.get('auth'), q, Date.now());
  return q.format === 'text' ? c.text(s.text) : c.json(s);
});
