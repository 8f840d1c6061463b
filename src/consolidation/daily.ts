// The daily cron's consolidation part: a `consolidate-project` job for every project that got observations in the
// last day (each job is bounded per step; a project with nothing new is left as the last run left it).
import { activeProjects } from '../db/consolidation';
import { teamDb, teamsWithShards } from '../db/shards';
import type { CairnEnv } from '../env';
import { startJob } from '../jobs/start';
import { consolidateJob } from './job';

/** Projects started per team per day at most. */
const PROJECTS_PER_TEAM = 200;
const DAY_MS = 24 * 3_600_000;

export async function startDailyConsolidation(
  env: CairnEnv,
  now: number,
): Promise<{ teams: number; projects: number }> {
  const teams = await teamsWithShards(env);
  let projects = 0;
  for (const t of teams) {
    const ids = await activeProjects(await teamDb(env, t.id), t.id, now - DAY_MS - 3_600_000, PROJECTS_PER_TEAM);
    for (const projectId of ids) await startJob(env, consolidateJob, t.id, { projectId });
    projects += ids.length;
  }
  return { teams: teams.length, projects };
}
