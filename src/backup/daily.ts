// The daily cron's backup part: with an R2 bucket bound as BACKUPS, a backup job for every team (each writes
// its team in bounded steps, src/backup/backup-job.ts); without one, nothing (backups are off).
import { teamsWithShards } from '../db/shards';
import type { CairnEnv } from '../env';
import { startJob } from '../jobs/start';
import { backupJob } from './backup-job';
import { stampOf } from './store';

export async function startDailyBackups(
  env: CairnEnv,
  now: number,
): Promise<{ off: true } | { teams: number; stamp: string }> {
  if (!env.BACKUPS) return { off: true };
  const stamp = stampOf(now);
  const teams = await teamsWithShards(env);
  // Every team's backup is stamped with the cron's own time (server time; a backup's stamp is never a client's).
  for (const t of teams) await startJob(env, backupJob, t.id, {}, null, { now });
  return { teams: teams.length, stamp };
}
