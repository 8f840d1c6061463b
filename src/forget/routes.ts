// HTTP side of forgetting: one route for every kind (record, session, project).
import { Hono } from 'hono';
import type { AppEnv } from '../auth/types';
import { jsonBody } from '../lib/validate';
import { ForgetBody, forgetProject, forgetRecord, forgetSession } from './service';

/** Mounted at /api/forget (scope `ingest`, declared in src/app.ts). */
export const forgetRoutes = new Hono<AppEnv>();

forgetRoutes.post('/', jsonBody(ForgetBody, 10_000), async (c) => {
  const body = c.req.valid('json');
  const auth = c.get('auth');
  const now = Date.now();
  const done =
    body.kind === 'session'
      ? await forgetSession(c.env, auth, body.session_id, now)
      : body.kind === 'project'
        ? await forgetProject(c.env, auth, body.project, body.confirm, now)
        : await forgetRecord(c.env, auth, body.kind, body.id, now);
  // A project is deleted by a job: 202 with it (GET /api/jobs/:id follows it); the rest is done when answered.
  if (done.job) return c.json({ forgotten: done.target, counts: done.counts, job: done.job }, 202);
  return c.json({ forgotten: done.target, counts: done.counts });
});
