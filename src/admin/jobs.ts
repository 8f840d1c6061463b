// Jobs over HTTP. Admins: GET /api/admin/jobs (the team's, newest first), GET /api/admin/jobs/:id, and
// POST /api/admin/jobs {kind, params?} for the kinds an admin may start by hand (the others are started by
// their feature's route: forget, export, import, or by the server itself). Anyone: GET /api/jobs/:id for a
// job they started (a member forgetting their own private project follows it there).
import { Hono } from 'hono';
import * as z from 'zod';
import type { AppEnv } from '../auth/types';
import { findJob, jobFor, listJobs, startJob, wireJob } from '../jobs/start';
import { hasAdminPower } from '../db/visibility';

// Other routes answer jobs in the same shape (the function lives with the job mechanism).
export { wireJob };
import { jobKind } from '../jobs/registry';
import { AppError } from '../lib/errors';
import { jsonBody, query } from '../lib/validate';

const noJob = () => new AppError(404, 'not_found', 'No such job.');

const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  kind: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,40}$/)
    .optional(),
});
type ListQuery = z.infer<typeof ListQuery>;

const StartBody = z
  .object({ kind: z.string().min(1).max(60), params: z.record(z.string(), z.unknown()).default({}) })
  .strict();
type StartBody = z.infer<typeof StartBody>;

/** Mounted at /api/admin/jobs (admin guard in src/app.ts). */
export const adminJobRoutes = new Hono<AppEnv>()
  .get('/', query(ListQuery, { blankIsAbsent: true }), async (c) => {
    const { limit, kind } = c.req.valid('query');
    const auth = c.get('auth');
    const jobs = await listJobs(c.env, auth.teamId, limit, kind);
    return c.json({ jobs: jobs.map((j) => jobFor(j, auth)) });
  })
  .get('/:id', async (c) => {
    const auth = c.get('auth');
    const job = await findJob(c.env, auth.teamId, c.req.param('id'));
    if (!job) throw noJob();
    return c.json({ job: jobFor(job, auth) });
  })
  .post('/', jsonBody(StartBody, 10_000), async (c) => {
    const { kind: name, params } = c.req.valid('json');
    const kind = jobKind(name);
    if (!kind || !kind.adminStartable || kind.lane !== 'team')
      throw new AppError(400, 'unknown_job_kind', `"${name}" is not a job an admin can start here.`);
    const auth = c.get('auth');
    const job = await startJob(c.env, kind, auth.teamId, params, { userId: auth.userId, handle: auth.handle });
    return c.json({ job: wireJob(job) }, 202);
  });

/** Mounted at /api/jobs: a job the caller started (admins with an admin-scoped token: any of the team's). */
export const ownJobRoutes = new Hono<AppEnv>().get('/:id', async (c) => {
  const auth = c.get('auth');
  const job = await findJob(c.env, auth.teamId, c.req.param('id'));
  if (!job || (job.actorUserId !== auth.userId && !hasAdminPower(auth))) throw noJob();
  return c.json({ job: jobFor(job, auth) });
});
