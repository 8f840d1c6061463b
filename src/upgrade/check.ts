// Upgrades start by themselves: the first request an isolate serves (and the daily cron) compares the data
// version the directory records with this code's DATA_VERSION and, when it is lower, starts the upgrade job for
// it. One statement per isolate, off the answer's path (waitUntil); isolates that look at once start one job
// (the job is one per version).
import { dataVersion } from '../db/maintenance';
import { directoryDb } from '../db/shards';
import type { CairnEnv } from '../env';
import { startJob } from '../jobs/start';
import { errorText, log } from '../lib/log';
import { upgradeJob } from './upgrade-job';
import { DATA_VERSION } from './versions';

/** Starts the upgrade job when the data is behind this code; the job's id, or null when nothing is due. */
export async function startUpgradeIfBehind(env: CairnEnv): Promise<string | null> {
  const at = await dataVersion(directoryDb(env));
  if (at >= DATA_VERSION) return null;
  const job = await startJob(env, upgradeJob, null, { to: DATA_VERSION });
  log('info', 'upgrade started', { from: at, to: DATA_VERSION, job: job.id });
  return job.id;
}

let checked: Promise<unknown> | null = null;

/** Once per isolate: the check above, in the background of the request that happens to come first. */
export function upgradeOnce(env: CairnEnv, ctx: Pick<ExecutionContext, 'waitUntil'>): void {
  if (checked) return;
  checked = startUpgradeIfBehind(env).catch((err: unknown) => {
    checked = null; // the next request tries again
    log('error', 'upgrade check failed', { message: errorText(err) });
  });
  ctx.waitUntil(checked);
}

/** Tests: the next request checks again (a test file's databases are new, but its isolate may have checked before). */
export function forgetUpgradeCheck(): void {
  checked = null;
}
