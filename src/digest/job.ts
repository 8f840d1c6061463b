// The team's digest (issue 36): a `digest` job in the team's lane, started by the team's daily job (startTeamDigest,
// below) for a team that set a webhook: it reads the window since the last digest that went out (at most a week;
// otherwise the schedule's period) as every member may read it (team projects only, no held row, no sensitive row
// unless the team shares them), renders it as a Slack-compatible message and posts it. A receiver that fails is
// recorded (`digest_runs`: GET /api/admin/health shows it) and the step throws, so the job's lane tries again after
// 2 s, 8 s, 32 s, … (six attempts); the next period's digest covers what a failed one missed. One step: two statements
// for the window, a few for the settings and the record, one subrequest for the post.
import * as z from 'zod';
import { configOf } from '../config';
import { meteredFetch } from '../db/meter-bindings';
import { directoryDb, teamDb } from '../db/shards';
import { parseTeamSettings } from '../db/team-settings';
import { teamInfo, teamSettingsText } from '../db/teams';
import { everyMember } from '../db/visibility';
import type { CairnEnv } from '../env';
import { startJob } from '../jobs/start';
import { JobFailure, type JobKind } from '../jobs/types';
import { errorText } from '../lib/log';
import { dayRows, digestRun, recordDigestAttempt } from './queries';
import { groupDay, renderSlackDigest } from './render';
import { maskedWebhook, webhookRefusal } from './webhook';
import { DAY, digestPeriod, digestSchedule } from './schedule';

/** How far back a digest reaches at most when earlier ones failed (the rest was the previous week's news). */
const CATCH_UP_MS = 7 * DAY;
const POST_TIMEOUT_MS = 10_000;

const Params = z.object({ at: z.number().int().nonnegative(), period: z.string().min(1).max(20) }).strict();
type Params = z.infer<typeof Params>;

export interface DigestResult {
  period: string;
  /** `sent`, or why nothing was posted. */
  outcome: 'sent' | 'off' | 'already_sent' | 'nothing_new';
  projects?: number;
  rows?: number;
}

export const digestJob: JobKind<Params, { tried: number }> = {
  name: 'digest',
  lane: 'team',
  params: Params,
  // One digest of a period per team: the next day's dispatch (or a restart) finds it and leaves it.
  dedupe: (p) => `digest:${p.period}`,
  init: () => ({ cursor: { tried: 0 }, progress: { done: 0, total: 1, unit: 'digests', phase: 'waiting' } }),
  async step(ctx, p, cursor) {
    const teamId = ctx.teamId;
    if (teamId === null) throw new JobFailure('team_lane_only', 'A digest runs in a team lane.');
    const dir = directoryDb(ctx.env);
    const done = (result: DigestResult) => ({
      cursor,
      done: true,
      progress: { done: 1, total: 1, unit: 'digests', phase: 'done' },
      result,
    });
    const settings = parseTeamSettings(await teamSettingsText(dir, teamId));
    const url = settings.digest_webhook_url;
    if (!url) return done({ period: p.period, outcome: 'off' });
    const refused = webhookRefusal(url, configOf(ctx.env).local);
    if (refused) {
      // A URL stored before this configuration (a local run's loopback receiver in production): shown, not retried.
      const error = `digest_webhook_url: ${refused}`;
      await recordDigestAttempt(dir, teamId, { period: p.period, at: Date.now(), error });
      throw new JobFailure('invalid_webhook', `${error}.`);
    }
    const run = await digestRun(dir, teamId);
    if (run?.sentPeriod === p.period) return done({ period: p.period, outcome: 'already_sent' });
    const period = digestSchedule(settings) === 'weekly' ? 7 * DAY : DAY;
    const from = run?.sentUntil && p.at - run.sentUntil <= CATCH_UP_MS ? run.sentUntil : p.at - period;
    const rows = await dayRows(await teamDb(ctx.env, teamId), everyMember(teamId, settings), {
      from,
      until: p.at,
      author: null,
      projectId: null,
    });
    const groups = groupDay(rows);
    const count = rows.summaries.length + rows.observations.length;
    if (!count) {
      await recordDigestAttempt(dir, teamId, { period: p.period, at: Date.now(), sentUntil: p.at });
      return done({ period: p.period, outcome: 'nothing_new' });
    }
    const team = await teamInfo(dir, teamId);
    const message = renderSlackDigest(groups, {
      who: team?.name ?? team?.slug ?? 'team',
      from,
      until: p.at,
      timeZone: 'UTC',
      more: rows.more,
    });
    let failure: string | null = null;
    try {
      const res = await meteredFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify(message),
        signal: AbortSignal.timeout(POST_TIMEOUT_MS),
        redirect: 'manual',
      });
      await res.body?.cancel();
      if (res.status < 200 || res.status >= 300) failure = `the webhook answered ${res.status}`;
    } catch (err) {
      // The URL is a credential: never in the record an admin reads, whatever the runtime's message quotes of it.
      failure = `the webhook could not be reached: ${errorText(err).split(url).join(maskedWebhook(url)).slice(0, 200)}`;
    }
    if (failure) {
      await recordDigestAttempt(dir, teamId, { period: p.period, at: Date.now(), error: failure });
      // The lane retries the step (2 s, 8 s, 32 s, …); the record shows it meanwhile.
      throw new Error(failure);
    }
    await recordDigestAttempt(dir, teamId, { period: p.period, at: Date.now(), sentUntil: p.at });
    return done({ period: p.period, outcome: 'sent', projects: groups.length, rows: count });
  },
};

/**
 * The team's digest for the day of `now` when its settings (the directory's JSON text) ask for one and it is due:
 * every day, or on Mondays (UTC) when weekly. The job's id (or the one of that period already there), else null. One
 * Durable Object call, or none.
 */
export async function startTeamDigest(
  env: CairnEnv,
  teamId: number,
  settingsText: string,
  now: number,
): Promise<string | null> {
  const schedule = digestSchedule(parseTeamSettings(settingsText));
  if (!schedule || (schedule === 'weekly' && new Date(now).getUTCDay() !== 1)) return null;
  return (await startJob(env, digestJob, teamId, { at: now, period: digestPeriod(schedule, now) })).id;
}
