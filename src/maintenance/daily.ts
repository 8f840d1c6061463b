// The daily cron (wrangler.toml [triggers]): FTS indexes checked against their tables (healed after a restore),
// teams' retention_days applied, the upgrade job (or its check for records without vectors) started, and each
// team's backup job started when a bucket is bound (src/backup/). Each part is recorded in
// maintenance_runs as it starts and ends, so `GET /api/admin/health` shows a cron that failed or stopped; a
// part that fails is recorded and logged, and the parts after it still run.
import { runEnded, runStarted, type MaintenanceJob } from '../db/maintenance';
import { directoryDb } from '../db/shards';
import type { CairnEnv } from '../env';
import { applyRetention } from '../retention/sweep';
import { startSessionRetirement } from '../retention/session-retire';
import { startDailyFtsUpkeep } from '../search/fts-upkeep';
import { errorText, log } from '../lib/log';
import { startDailyBackups } from '../backup/daily';
import { startDailyConsolidation } from '../consolidation/daily';
import { startJob } from '../jobs/start';
import { upgradeJob } from '../upgrade/upgrade-job';
import { startUpgradeIfBehind } from '../upgrade/check';

type Part = (env: CairnEnv, now: number) => Promise<Record<string, unknown>>;

const PARTS: [MaintenanceJob, Part][] = [
  // Checked, refilled and merged in steps by a job per shard (src/search/fts-upkeep.ts): started here.
  ['fts_check', async (env) => ({ jobs: await startDailyFtsUpkeep(env) })],
  // Teams' retention_days, and a sweep per database for ended sessions whose object still holds their text.
  [
    'retention',
    async (env, now) => ({ ...(await applyRetention(env, now)), sessions: await startSessionRetirement(env, now) }),
  ],
  // A data upgrade the first request has not started yet, else the check for records without vectors.
  [
    'upgrade_check',
    async (env) => ({ job: (await startUpgradeIfBehind(env)) ?? (await startJob(env, upgradeJob, null, {})).id }),
  ],
  ['backup', async (env, now) => ({ ...(await startDailyBackups(env, now)) })],
  // Near-duplicates of each project that got observations today merged by a job per project (src/consolidation/).
  ['consolidate', async (env, now) => ({ ...(await startDailyConsolidation(env, now)) })],
];

/** Runs every part in order; never throws (each failure is in its record and the log). */
export async function runDailyMaintenance(
  env: CairnEnv,
  now: number,
  parts: [MaintenanceJob, Part][] = PARTS,
): Promise<void> {
  const dir = directoryDb(env);
  for (const [job, part] of parts) {
    const note = (what: Promise<void>) =>
      what.catch((err: unknown) => log('error', 'maintenance record failed', { job, message: errorText(err) }));
    await note(runStarted(dir, job, now));
    try {
      const detail = await part(env, now);
      log('info', 'maintenance', { job, detail: JSON.stringify(detail).slice(0, 1000) });
      await note(runEnded(dir, job, Date.now(), { detail }));
    } catch (err) {
      const message = errorText(err);
      log('error', 'maintenance failed', { job, message });
      await note(runEnded(dir, job, Date.now(), { error: message }));
    }
  }
}
