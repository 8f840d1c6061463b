// Team retention: a team that sets `retention_days` keeps observations, summaries and prompts that long. The
// team's daily job (src/maintenance/team-job.ts, started for every team by the daily cron's dispatcher) starts a
// `retention-sweep` job for it (src/retention/sweep-job.ts), which deletes older ones from D1, the FTS indexes and
// the vector index in bounded steps.
import { parseTeamSettings } from '../db/team-settings';
import type { CairnEnv } from '../env';
import { startJob } from '../jobs/start';
import { retentionSweepJob } from './sweep-job';

const DAY_MS = 86_400_000;

/**
 * The team's sweep when its settings (the directory's JSON text) set retention_days: the new job's id (or the one
 * still running), else null. One Durable Object call, or none.
 */
export async function startTeamRetention(
  env: CairnEnv,
  teamId: number,
  settings: string,
  now: number,
): Promise<string | null> {
  const days = parseTeamSettings(settings).retention_days;
  if (!days) return null;
  return (await startJob(env, retentionSweepJob, teamId, { before: now - days * DAY_MS, days })).id;
}
