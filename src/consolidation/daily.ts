// The daily consolidation of one team: a `consolidate-project` job for each project that got observations in the
// last day (each job bounded per step; a project with nothing new is left as the last run left it), started a page
// at a time by the team's daily job (src/maintenance/team-job.ts).
import { activeProjects } from '../db/consolidation';
import { teamDb } from '../db/shards';
import type { CairnEnv } from '../env';
import { startJob } from '../jobs/start';
import { consolidateJob } from './job';

/** Projects started per team per day at most. */
export const PROJECTS_PER_TEAM = 200;
const DAY_MS = 24 * 3_600_000;

/**
 * Starts the jobs of up to `limit` active projects after `afterProjectId` (one statement, a Durable Object call
 * each); answers how many and the last project started (the next page goes on after it), `more` when the page was full.
 */
export async function startConsolidationPage(
  env: CairnEnv,
  teamId: number,
  now: number,
  afterProjectId: number,
  limit: number,
): Promise<{ started: number; last: number; more: boolean }> {
  const ids = await activeProjects(await teamDb(env, teamId), teamId, now - DAY_MS - 3_600_000, limit, afterProjectId);
  for (const projectId of ids) await startJob(env, consolidateJob, teamId, { projectId });
  return { started: ids.length, last: ids.at(-1) ?? afterProjectId, more: ids.length === limit };
}
