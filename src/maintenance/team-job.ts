// One team's part of the daily run (`daily-team`, the team's lane), started for every team by the dispatcher
// (dispatch-job.ts): the team's retention sweep when it sets retention_days, its digest when it set a webhook
// (src/digest/job.ts), its backup when a bucket is bound, and a
// consolidation job for each project that got observations in the last day (a page of projects a unit, at most
// PROJECTS_PER_TEAM a day). It only starts jobs, each in the same lane and each bounded per step itself, so a step
// here is a few statements and at most a page of Durable Object calls, whatever the size of the team. Every start is
// deduplicated by its kind while the job waits or runs (one sweep, one backup, one consolidation per project), and
// every one of those jobs is safe to run again, so a step run again after a restart (or a second start of the day's
// job after the first ended) costs a few calls and changes nothing.
import * as z from 'zod';
import { startTeamBackup } from '../backup/daily';
import { PROJECTS_PER_TEAM, startConsolidationPage } from '../consolidation/daily';
import { directoryDb } from '../db/shards';
import { teamSettingsText } from '../db/teams';
import type { JobProgress } from '#shared/jobs';
import { JobFailure, type JobKind, type UnitCost } from '../jobs/types';
import { startTeamRetention } from '../retention/sweep';
import { startTeamDigest } from '../digest/job';

const Params = z.object({ at: z.number().int().nonnegative() }).strict();
type Params = z.infer<typeof Params>;

type Part = 'retention' | 'digest' | 'backup' | 'consolidate' | 'done';
const PARTS: Part[] = ['retention', 'digest', 'backup', 'consolidate', 'done'];

export interface TeamDayCursor {
  part: Part;
  /** Consolidation: the last project started (the next page goes on after it). */
  after: number;
  retention: string | null;
  digest: string | null;
  backup: string | null;
  /** Consolidation jobs started. */
  projects: number;
}

/** Projects a consolidation unit starts at most (a Durable Object call each: well inside Free's step budget). */
export const PROJECTS_PER_UNIT = 20;

/** What a unit of each part costs at most: the settings read (retention), the shard look-up and the page (consolidate). */
const COST: Record<Exclude<Part, 'done'>, UnitCost> = {
  retention: { statements: 1, subrequests: 1 },
  digest: { statements: 1, subrequests: 1 },
  backup: { statements: 0, subrequests: 1 },
  consolidate: { statements: 2, subrequests: PROJECTS_PER_UNIT },
};

/** The UTC day of a time: a team's job of one day is started once while it waits or runs. */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

const progress = (c: TeamDayCursor): JobProgress => ({
  done: PARTS.indexOf(c.part),
  total: PARTS.length - 1,
  unit: 'parts',
  phase: c.part === 'done' ? 'done' : `starting the ${c.part} job${c.part === 'consolidate' ? 's' : ''}`,
});

export const dailyTeamJob: JobKind<Params, TeamDayCursor> = {
  name: 'daily-team',
  lane: 'team',
  params: Params,
  dedupe: (p) => `daily-team:${dayOf(p.at)}`,
  init: () => {
    const cursor: TeamDayCursor = {
      part: 'retention',
      after: 0,
      retention: null,
      digest: null,
      backup: null,
      projects: 0,
    };
    return { cursor, progress: progress(cursor) };
  },
  async step(ctx, p, start) {
    const teamId = ctx.teamId;
    if (teamId === null) throw new JobFailure('team_lane_only', 'The daily team job runs in a team lane.');
    const c = { ...start };
    while (c.part !== 'done' && ctx.fits(COST[c.part])) {
      if (c.part === 'retention') {
        const settings = (await teamSettingsText(directoryDb(ctx.env), teamId)) ?? '{}';
        c.retention = await startTeamRetention(ctx.env, teamId, settings, p.at);
        c.part = 'digest';
      } else if (c.part === 'digest') {
        const settings = (await teamSettingsText(directoryDb(ctx.env), teamId)) ?? '{}';
        c.digest = await startTeamDigest(ctx.env, teamId, settings, p.at);
        c.part = 'backup';
      } else if (c.part === 'backup') {
        c.backup = await startTeamBackup(ctx.env, teamId, p.at);
        c.part = 'consolidate';
      } else {
        const room = Math.min(PROJECTS_PER_UNIT, PROJECTS_PER_TEAM - c.projects);
        const page = await startConsolidationPage(ctx.env, teamId, p.at, c.after, room);
        c.projects += page.started;
        c.after = page.last;
        if (!page.more || c.projects >= PROJECTS_PER_TEAM) c.part = 'done';
      }
    }
    const done = c.part === 'done';
    return {
      cursor: c,
      done,
      progress: progress(c),
      ...(done
        ? {
            result: {
              day: dayOf(p.at),
              retention: c.retention,
              digest: c.digest,
              backup: c.backup,
              consolidate: c.projects,
            },
          }
        : {}),
    };
  },
};
