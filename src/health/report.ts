// A team's health assembled from where each part lives: the observer's state and the sessions' backlog (TeamDO),
// dead letters of emptied sessions, the last retention sweep and the database size (the team's shard), the
// budget, and the daily cron's record (the directory).
import { configOf } from '../config';
import type { CairnEnv } from '../env';
import { embedSkipped, lastRetentionSweep, retiredDeadLetters } from './queries';
import { maintenanceRunList, type MaintenanceRun } from '../db/maintenance';
import { boundShards, directoryDb, shardDb, shardOf, teamCountsByShard, teamsWithShards } from '../db/shards';
import { teamInfo, teamSettingsText } from '../db/teams';
import { databaseBytes } from '../db/sqlite';
import { parseTeamSettings } from '../db/team-settings';
import { teamBudget } from '../observer/spend';
import type { ObserverHealth } from '../slots/observer-health';
import { teamStub } from '../slots/team-do';
import { budgetJson, observerOf } from '../usage/routes';
import { digestSchedule } from '../digest/schedule';
import { digestRun, digestRunsOf, type DigestRun } from '../digest/queries';
import {
  D1_LIMIT_BYTES,
  type MaintenanceJson,
  type ObserverStateJson,
  type OperatorHealthJson,
  type ShardJson,
  type TeamHealthJson,
} from './types';

export const maintenanceJson = (r: MaintenanceRun): MaintenanceJson => ({
  job: r.job,
  started_at: r.startedAt,
  finished_at: r.finishedAt,
  ok: r.ok,
  error: r.error,
  detail: r.detail,
});

export function observerStateJson(h: ObserverHealth): ObserverStateJson {
  return {
    state: h.state,
    kind: h.kind,
    code: h.code,
    since: h.since,
    retry_at: h.retry_at,
    pending: h.backlog.pending,
    oldest_pending_at: h.backlog.oldestAt,
    notice: h.notice,
  };
}

export async function shardJson(env: CairnEnv, binding: string): Promise<ShardJson> {
  const size = await databaseBytes(shardDb(env, binding)).catch(() => null);
  return { binding, size_bytes: size, limit_bytes: D1_LIMIT_BYTES, used: size === null ? null : size / D1_LIMIT_BYTES };
}

interface TeamRow {
  id: number;
  slug: string;
  settings: string;
  shard: string;
}

async function teamHealth(
  env: CairnEnv,
  team: TeamRow,
  maintenance: MaintenanceJson[],
  shard: ShardJson,
  now: number,
  /** The team's digest record when the caller read it with its page's (undefined: read here when it has a webhook). */
  digestRecord?: DigestRun | null,
): Promise<TeamHealthJson> {
  const d = shardDb(env, team.shard);
  const settings = parseTeamSettings(team.settings);
  const schedule = digestSchedule(settings);
  const [health, retired, sweep, budget, skipped, digest] = await Promise.all([
    teamStub(env, team.id).health(now),
    retiredDeadLetters(d, team.id),
    lastRetentionSweep(d, team.id),
    teamBudget(d, team.id, now, settings),
    embedSkipped(d, team.id),
    schedule && digestRecord === undefined ? digestRun(directoryDb(env), team.id) : (digestRecord ?? null),
  ]);
  const observer = observerOf(env);
  return {
    team: team.slug,
    observer: {
      ...observerStateJson(health),
      provider: observer.provider,
      model: observer.model,
      detail: health.detail,
      last_ok_at: health.last_ok_at,
    },
    events: {
      sessions: health.backlog.sessions,
      pending: health.backlog.pending,
      oldest_pending_at: health.backlog.oldestAt,
      oldest_age_ms: health.backlog.oldestAt === null ? null : Math.max(0, now - health.backlog.oldestAt),
    },
    dead_letters: { retryable: health.backlog.deadLetters, retired },
    vectors: { skipped },
    budget: budgetJson(budget),
    retention: { days: settings.retention_days ?? null, last_sweep: sweep },
    maintenance,
    shard,
    digest: schedule
      ? {
          schedule,
          period: digest?.period ?? null,
          attempts: digest?.attempts ?? 0,
          last_attempt_at: digest?.lastAttemptAt ?? null,
          last_sent_at: digest?.lastOkAt ?? null,
          failing_since: digest?.failingSince ?? null,
          error: digest?.lastError ?? null,
        }
      : null,
  };
}

async function teamRow(env: CairnEnv, teamId: number): Promise<TeamRow> {
  const dir = directoryDb(env);
  const [info, settings, shard] = await Promise.all([
    teamInfo(dir, teamId),
    teamSettingsText(dir, teamId),
    shardOf(env, teamId),
  ]);
  return { id: teamId, slug: info?.slug ?? String(teamId), settings: settings ?? '{}', shard };
}

/** GET /api/admin/health: the caller's team. */
export async function healthOfTeam(env: CairnEnv, teamId: number, now: number): Promise<TeamHealthJson> {
  const team = await teamRow(env, teamId);
  const [runs, shard] = await Promise.all([maintenanceRunList(directoryDb(env)), shardJson(env, team.shard)]);
  return teamHealth(env, team, runs.map(maintenanceJson), shard, now);
}

/** Teams a page of GET /api/admin/teams/health holds at most. */
export const OPERATOR_PAGE_MAX = 50;

/**
 * The page size a request gets. A team costs a TeamDO call and five reads (six with a spend budget set: dead
 * letters, the last sweep, skipped vectors' three counts, the spend), the page four reads more, and one for its
 * teams' digest records when one has a webhook (test/worker/health/health-routes.test.ts counts them): Free's 50
 * queries and subrequests an invocation take 6 teams; Paid takes 20 by default and up to 50 when asked (~350).
 */
export function operatorPageLimit(env: CairnEnv, asked: number | undefined): number {
  const free = configOf(env).plan.name === 'free';
  return Math.min(free ? 6 : OPERATOR_PAGE_MAX, asked ?? (free ? 6 : 20));
}

/**
 * GET /api/admin/teams/health: every database and a page of teams (by id, after `afterId`), for the operator. What
 * one request costs grows with `limit` (a TeamDO call and a few small reads per team), never with the number of
 * teams: the shards' team counts are two statements; `next_cursor` names the page after this one (null: the last).
 */
export async function healthOfServer(
  env: CairnEnv,
  now: number,
  page: { afterId: number; limit: number },
): Promise<OperatorHealthJson> {
  const [rows, runs, shards, counts] = await Promise.all([
    teamsWithShards(env, page.afterId, page.limit + 1),
    maintenanceRunList(directoryDb(env)),
    Promise.all(boundShards(env).map((b) => shardJson(env, b))),
    teamCountsByShard(env),
  ]);
  const teams = rows.slice(0, page.limit);
  // The page's digest records in one read (none without a webhook), not one a team: 6 teams stay within Free's 50.
  const withDigest = teams.filter((t) => digestSchedule(parseTeamSettings(t.settings))).map((t) => t.id);
  const digests = await digestRunsOf(directoryDb(env), withDigest);
  const byBinding = new Map(shards.map((s) => [s.binding, s]));
  // One team at a time: each view is a Durable Object call and a few small reads.
  const teamViews = [];
  for (const t of teams)
    teamViews.push(
      await teamHealth(
        env,
        t,
        [],
        byBinding.get(t.shard) ?? (await shardJson(env, t.shard)),
        now,
        digests.get(t.id) ?? null,
      ),
    );
  return {
    teams: teamViews,
    next_cursor: rows.length > page.limit ? String(teams.at(-1)!.id) : null,
    shards: shards.map((s) => ({ ...s, teams: counts.get(s.binding) ?? 0 })),
    maintenance: runs.map(maintenanceJson),
  };
}
