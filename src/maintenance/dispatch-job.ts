// The daily run's dispatcher (`daily`, the server's lane). The cron only starts it (daily.ts). Its first step runs
// the server-wide parts (the FTS check and the stranded-session sweep of every shard, the upgrade check: a job per
// shard or one); each later step pages through the teams by id and starts one `daily-team` job per team
// (team-job.ts) in the team's own lane, TEAMS_PER_STEP at a time with a pause between pages: one statement for the
// page, one for the record and a Durable Object call per team, whatever the number of teams. Its progress is the
// `daily` record of maintenance_runs (GET /api/admin/health): started when the first step runs, the teams reached so
// far after each step, ok when the last team's job is started, the error when a step fails (a later step that goes
// through clears it; when the job gives up, it stays). A step run again after a restart starts from its saved
// cursor: the teams of its page are started again (a team's job of the day answers for itself while it waits or
// runs; one that already ran runs again, which changes nothing), the teams before it never.
import * as z from 'zod';
import { runEnded, runEndedIfOwn, runProgress, runStarted, type MaintenanceJob } from '../db/maintenance';
import { directoryDb } from '../db/shards';
import { teamIdsAfter } from '../db/teams';
import type { CairnEnv } from '../env';
import type { JobProgress } from '#shared/jobs';
import { startJob } from '../jobs/start';
import type { JobKind } from '../jobs/types';
import { errorText, log } from '../lib/log';
import { startSessionRetirement } from '../retention/session-retire';
import { startDailyFtsUpkeep } from '../search/fts-upkeep';
import { startUpgradeIfBehind } from '../upgrade/check';
import { upgradeJob } from '../upgrade/upgrade-job';
import { dailyTeamJob, dayOf } from './team-job';

const Params = z.object({ at: z.number().int().nonnegative() }).strict();
type Params = z.infer<typeof Params>;

export interface DispatchCursor {
  phase: 'start' | 'teams';
  /** The last team whose job was started. */
  after: number;
  /** Teams whose job was started. */
  teams: number;
}

/** Teams a step starts a job for at most: a Durable Object call each, within Free's 40-subrequest step budget. */
export const TEAMS_PER_STEP = 25;
/** The pause between two pages, so the teams' jobs (and the backups and sweeps they start) begin a page at a time. */
export const PAGE_PAUSE_MS = 1_000;

export type ServerPart = (env: CairnEnv, at: number) => Promise<Record<string, unknown>>;

/** The parts that are the server's, not a team's: each its own record, a failing one recorded and the next still run. */
const SERVER_PARTS: [MaintenanceJob, ServerPart][] = [
  // Checked, refilled and merged in steps by a job per shard (src/search/fts-upkeep.ts).
  ['fts_check', async (env) => ({ jobs: await startDailyFtsUpkeep(env) })],
  // A sweep per database for ended sessions whose object still holds their text (src/retention/session-retire.ts).
  ['session_retire', async (env, at) => ({ jobs: await startSessionRetirement(env, at) })],
  // A data upgrade the first request has not started yet, else the check for records without vectors.
  [
    'upgrade_check',
    async (env) => ({ job: (await startUpgradeIfBehind(env)) ?? (await startJob(env, upgradeJob, null, {})).id }),
  ],
];

const progress = (c: DispatchCursor, done = false): JobProgress => ({
  done: c.teams,
  total: null,
  unit: 'teams',
  phase: done ? 'done' : c.phase === 'start' ? 'server-wide parts' : "starting each team's daily job",
});

/** Runs each server-wide part, recorded as it starts and ends; a failing part is recorded and the next still runs. */
export async function runServerParts(
  env: CairnEnv,
  at: number,
  parts: [MaintenanceJob, ServerPart][] = SERVER_PARTS,
): Promise<void> {
  const dir = directoryDb(env);
  for (const [job, part] of parts) {
    await runStarted(dir, job, at);
    try {
      await runEnded(dir, job, Date.now(), { detail: await part(env, at) });
    } catch (err) {
      const message = errorText(err);
      log('error', 'maintenance failed', { job, message });
      await runEnded(dir, job, Date.now(), { error: message });
    }
  }
}

export const dailyDispatchJob: JobKind<Params, DispatchCursor> = {
  name: 'daily',
  lane: 'system',
  params: Params,
  dedupe: (p) => `daily:${dayOf(p.at)}`,
  init: () => {
    const cursor: DispatchCursor = { phase: 'start', after: 0, teams: 0 };
    return { cursor, progress: progress(cursor) };
  },
  async step(ctx, p, start) {
    const dir = directoryDb(ctx.env);
    const c = { ...start };
    try {
      if (c.phase === 'start') {
        await runStarted(dir, 'daily', p.at);
        await runServerParts(ctx.env, p.at);
        c.phase = 'teams';
        await runProgress(dir, 'daily', p.at, { job: ctx.jobId, teams: 0, progress_at: Date.now() });
        return { cursor: c, done: false, progress: progress(c) };
      }
      // A page as large as the step's budget allows (the page's read and the record's write included), started at
      // once: the calls go to different objects (the platform queues those past its open-connection limit).
      const room = ctx.budget.subrequests - ctx.used().subrequests - 2;
      const size = Math.max(1, Math.min(TEAMS_PER_STEP, room));
      const page = await teamIdsAfter(dir, c.after, size);
      await Promise.all(page.map((teamId) => startJob(ctx.env, dailyTeamJob, teamId, { at: p.at })));
      c.after = page.at(-1) ?? c.after;
      c.teams += page.length;
      if (page.length < size) {
        const detail = { job: ctx.jobId, teams: c.teams };
        await runEndedIfOwn(dir, 'daily', p.at, Date.now(), { detail });
        return { cursor: c, done: true, progress: progress(c, true), result: detail };
      }
      await runProgress(dir, 'daily', p.at, { job: ctx.jobId, teams: c.teams, progress_at: Date.now() });
      return { cursor: c, done: false, progress: progress(c), waitMs: PAGE_PAUSE_MS };
    } catch (err) {
      // Shown in the record until a later attempt goes through (or for good, when the job gives up).
      await runEndedIfOwn(dir, 'daily', p.at, Date.now(), { error: errorText(err) }).catch(() => undefined);
      throw err;
    }
  },
};
