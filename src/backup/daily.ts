// The daily backup of one team: with an R2 bucket bound as BACKUPS, a backup job in the team's lane (it writes the
// team in bounded steps, src/backup/backup-job.ts), started by the team's daily job (src/maintenance/team-job.ts);
// without one, nothing (backups are off).
import type { CairnEnv } from '../env';
import { startJob } from '../jobs/start';
import { backupJob } from './backup-job';

/** The team's backup job stamped with the run's own time (server time; or the one still running); null when backups are off. */
export async function startTeamBackup(env: CairnEnv, teamId: number, now: number): Promise<string | null> {
  if (!env.BACKUPS) return null;
  return (await startJob(env, backupJob, teamId, {}, null, { now })).id;
}
