// The daily cron (wrangler.toml [triggers]): FTS indexes checked against their tables (healed after a restore), ended
// sessions whose object still holds their text swept (per database), the upgrade job (or its check for records
// without vectors) started, and for every team its retention sweep, backup
// (when a bucket is bound) and consolidation. The scheduled invocation itself only starts the dispatcher job
// (dispatch-job.ts): one Durable Object call, whatever the number of teams. The dispatcher's steps (a page of teams
// each) and every team's own job do the rest, each an invocation of its own within its step budget, and the
// `daily` record of maintenance_runs shows how far it got (GET /api/admin/health), so a run that failed or stopped
// is seen.
import { runEnded, runStarted } from '../db/maintenance';
import { directoryDb } from '../db/shards';
import type { CairnEnv } from '../env';
import { startJob } from '../jobs/start';
import { errorText, log } from '../lib/log';
import { dailyDispatchJob } from './dispatch-job';

/** Starts the day's dispatcher (or answers the one already started that day); never throws (a failure is recorded). */
export async function startDailyMaintenance(env: CairnEnv, now: number): Promise<string | null> {
  try {
    const job = await startJob(env, dailyDispatchJob, null, { at: now });
    log('info', 'maintenance started', { job: job.id });
    return job.id;
  } catch (err) {
    const message = errorText(err);
    log('error', 'maintenance failed', { job: 'daily', message });
    const dir = directoryDb(env);
    await runStarted(dir, 'daily', now)
      .then(() => runEnded(dir, 'daily', Date.now(), { error: `the daily run did not start: ${message}` }))
      .catch((e: unknown) => log('error', 'maintenance record failed', { job: 'daily', message: errorText(e) }));
    return null;
  }
}
