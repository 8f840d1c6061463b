// A team's part of the daily run, for tests in the shared runtime: the team's `daily-team` job (what the cron's
// dispatcher starts in every team's lane) run to its end for this one team, never a walk over every team the
// runtime's database holds (other files' teams too).
import { env } from 'cloudflare:workers';
import type { JobRecord } from '../../../src/jobs/job-do';
import { startJob } from '../../../src/jobs/start';
import { dailyTeamJob } from '../../../src/maintenance/team-job';
import { runJob } from './jobs';

/** Runs the team's daily job for the run at `at` (one per team and day) and answers it, finished. */
export async function runTeamDay(teamId: number, at = Date.now()): Promise<JobRecord> {
  const job = await startJob(env, dailyTeamJob, teamId, { at });
  return runJob(teamId, job.id);
}
