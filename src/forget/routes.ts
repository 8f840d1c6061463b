// HTTP side of forgetting: one route for every kind (record, session, project).
import { Hono } from 'hono';
import { requireScope } from '../auth/middleware';
import type { AppEnv } from '../auth/types';
import { readJson } from '../lib/validate';
import { ForgetBody, forgetProject, forgetRecord, forgetSession } from './service';

export const forgetRoutes = new Hono<AppEnv>();

forgetRoutes.post('/api/forget', requireScope('ingest'), async (c) => {
  const body = await readJson(c, ForgetBody, 10_000);
  const auth = c.get('auth');
  const now = Date.now();
  const done =
    body.kind === 'session'
      ? await forgetSession(c.env, auth, body.session_id, now)
      : body.kind === 'project'
        ? await forgetProject(c.env, auth, body.project, body.confirm, now)
        : await forgetRecord(c.env, auth, body.kind, body.id, now);
  return c.json({ forgotten: done.target, counts: done.counts });
});
