// Consolidation's admin routes: what was merged, and its undo. Mounted at /api/admin/merges under the admin guard
// (src/app.ts); the job itself is started by the daily maintenance or POST /api/admin/jobs.
import { Hono } from 'hono';
import * as z from 'zod';
import type { AppEnv } from '../auth/types';
import { parseWith } from '../lib/validate';
import { mergesFor, undoMerge } from './service';

export const mergeRoutes = new Hono<AppEnv>();

mergeRoutes.get('/', async (c) => c.json(await mergesFor(c.env, c.get('auth'), Date.now())));

const MergeId = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);

mergeRoutes.post('/:id/undo', async (c) => {
  const id = parseWith(MergeId, c.req.param('id'), 'invalid_id');
  return c.json(await undoMerge(c.env, c.get('auth'), id, Date.now()));
});
