// The operator's backup routes (CAIRN_ADMIN_SECRET, mounted under /api/admin/teams in src/app.ts):
//   GET  /:slug/backups           the team's backups in the BACKUPS bucket, newest first, complete or not
//   POST /:slug/backups           a backup now (the `backup` job; the daily cron starts one for every team)
//   POST /:slug/restore           {"backup": "<team>/<stamp>"}: that backup into team :slug, made if missing
//   GET  /:slug/jobs/:id          a job of the team's lane (the restore's progress)
// The backup named may be another team's (a restore under a new name) or come from another deployment whose
// bucket objects were copied into this one's.
import { Hono } from 'hono';
import * as z from 'zod';
import type { AppEnv } from '../auth/types';
import { directoryDb, openShards, placeTeam, syncTeamCopy, teamDbs } from '../db/shards';
import { ensureTeam, teamIdBySlug } from '../db/teams';
import { findJob, startJob } from '../jobs/start';
import { AppError, notFound } from '../lib/errors';
import { Name } from '../lib/names';
import { jsonBody, parseWith } from '../lib/validate';
import { wireJob } from '../admin/jobs';
import type { CairnEnv } from '../env';
import { backupJob } from './backup-job';
import { restoreJob } from './restore-job';
import { BackupName, backupBucket, byStartedAt, listBackups } from './store';

const RestoreBody = z.object({ backup: BackupName }).strict();

function bucketOf(env: CairnEnv): R2Bucket {
  const bucket = backupBucket(env);
  if (!bucket)
    throw new AppError(
      409,
      'backups_off',
      'No R2 bucket is bound as BACKUPS on this server (README "Your data": Backups).',
    );
  return bucket;
}

async function teamOf(env: CairnEnv, raw: string): Promise<{ slug: string; id: number }> {
  const slug = parseWith(Name, raw, 'not_found');
  const id = await teamIdBySlug(directoryDb(env), slug);
  if (id === undefined) throw notFound('team');
  return { slug, id };
}

export const backupRoutes = new Hono<AppEnv>()
  .get('/:slug/backups', async (c) => {
    const bucket = bucketOf(c.env);
    const slug = parseWith(Name, c.req.param('slug'), 'not_found');
    const list = (await listBackups(bucket, slug)).sort(byStartedAt);
    return c.json({
      team: slug,
      backups: list.map((b) => ({
        name: b.name,
        complete: b.manifest !== null,
        started_at: b.manifest?.started_at ?? null,
        finished_at: b.manifest?.finished_at ?? null,
        parts: b.manifest?.parts ?? null,
        bytes: b.manifest?.bytes ?? null,
        records: b.manifest?.records ?? null,
      })),
    });
  })
  .post('/:slug/backups', async (c) => {
    bucketOf(c.env);
    const team = await teamOf(c.env, c.req.param('slug'));
    return c.json({ job: wireJob(await startJob(c.env, backupJob, team.id, {})) }, 202);
  })
  .post('/:slug/restore', jsonBody(RestoreBody, 1_000), async (c) => {
    bucketOf(c.env);
    const slug = parseWith(Name, c.req.param('slug'), 'not_found');
    const { backup } = c.req.valid('json');
    const now = Date.now();
    openShards(c.env);
    const team = await ensureTeam(directoryDb(c.env), slug, slug, now);
    if (team.created) {
      await placeTeam(c.env, team.id, now);
      await syncTeamCopy(await teamDbs(c.env, team.id));
    }
    return c.json(
      { team: slug, created: team.created, job: wireJob(await startJob(c.env, restoreJob, team.id, { backup })) },
      202,
    );
  })
  .get('/:slug/jobs/:id', async (c) => {
    const team = await teamOf(c.env, c.req.param('slug'));
    const job = await findJob(c.env, team.id, c.req.param('id'));
    if (!job) throw notFound('job');
    return c.json({ job: wireJob(job) });
  });
