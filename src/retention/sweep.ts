// Team retention: a team that sets `retention_days` keeps observations, summaries and prompts that long. The
// daily cron (wrangler.toml [triggers]) starts a `retention-sweep` job per such team (src/retention/sweep-job.ts),
// which deletes older ones from D1, the FTS indexes and the vector index in bounded steps.
import { parseTeamSettings } from '../db/team-settings';
import { teamsWithShards } from '../db/shards';
import type { CairnEnv } from '../env';
import { startJob } from '../jobs/start';
import { retentionSweepJob } from './sweep-job';

const DAY_MS = 86_400_000;

export interface SweepReport {
  /** Teams with retention_days set: each has a sweep job (a new one, or the one still running). */
  teams: number;
  jobs: string[];
}

export async function applyRetention(env: CairnEnv, now: number): Promise<SweepReport> {
  const report: SweepReport = { teams: 0, jobs: [] };
  for (const team of await teamsWithShards(env)) {
    const days = parseTeamSettings(team.settings).retention_days;
    if (!days) continue;
    report.teams++;
    report.jobs.push((await startJob(env, retentionSweepJob, team.id, { before: now - days * DAY_MS, days })).id);
  }
  return report;
}
