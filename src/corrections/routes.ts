// HTTP side of corrections: the viewer and `cairn supersede` / `cairn feedback` call these.
import { Hono } from 'hono';
import * as z from 'zod';
import type { AppEnv } from '../auth/types';
import { jsonBody, parseWith, query } from '../lib/validate';
import { candidates, CandidatesQuery, promote, PromoteBody } from './promote';
import { decide, queueFor, ReviewBody } from './review';
import { FeedbackBody, giveFeedback, supersede, SupersedeBody } from './service';

/** Mounted at /api/corrections (reads: `read` or `ingest`; writes: `ingest`, declared in src/app.ts). */
export const correctionRoutes = new Hono<AppEnv>();

correctionRoutes.post('/supersede', jsonBody(SupersedeBody, 10_000), async (c) => {
  const done = await supersede(c.env, c.get('auth'), c.req.valid('json'), Date.now());
  return c.json({ superseded: done.id, by: done.by, previous: done.previous });
});

correctionRoutes.post('/feedback', jsonBody(FeedbackBody, 10_000), async (c) => {
  const done = await giveFeedback(c.env, c.get('auth'), c.req.valid('json'), Date.now());
  return c.json(done);
});

correctionRoutes.post('/promote', jsonBody(PromoteBody, 10_000), async (c) => {
  return c.json(await promote(c.env, c.get('auth'), c.req.valid('json'), Date.now()));
});

correctionRoutes.get('/promote/candidates', query(CandidatesQuery), async (c) => {
  return c.json({ candidates: await candidates(c.env, c.get('auth'), c.req.valid('query')) });
});

/** Mounted at /api/admin/review, under the admin guard (src/app.ts). */
export const reviewRoutes = new Hono<AppEnv>();

reviewRoutes.get('/', async (c) => c.json(await queueFor(c.env, c.get('auth'))));

const ReviewParam = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);

reviewRoutes.post('/:id', jsonBody(ReviewBody, 10_000), async (c) => {
  const id = parseWith(ReviewParam, c.req.param('id'), 'invalid_id');
  return c.json(await decide(c.env, c.get('auth'), id, c.req.valid('json'), Date.now()));
});
