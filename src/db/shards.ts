// Which D1 database holds a team (docs/capacity.md). `DB` is the directory: teams, users, devices, tokens and the
// shard map, the rows looked up before a team is known. A team's memory (projects, sessions, prompts,
// observations, summaries, audit log, observer usage, local vectors) lives on its shard: `DB` itself or one of
// `DB_1`, `DB_2`, … (a D1 binding per shard). A team without a map row lives on `DB`, so with one binding
// nothing here reads anything and every handle is the directory's: today's single-database install.
//
// A shard also keeps a copy of its teams' directory rows (teams, users, devices, same ids), because memory rows
// reference them (foreign keys) and name their authors (joins). The directory stays the source: every write
// to those rows goes there first and then refreshes the copy (`writeTeam`, `syncTeamCopy` in db/teams.ts).
import { count, eq, gt, ne } from 'drizzle-orm';
import { configOf, ConfigError } from '../config';
import type { CairnEnv } from '../env';
import { AppError } from '../lib/errors';
import { db, type Db } from './client';
import { withLatency } from './latency';
import { teams, teamShards } from './schema';
import { syncTeamCopy, type TeamDbs } from './teams';

export { syncTeamCopy, writeTeam, type TeamDbs } from './teams';

/** The directory's binding, which is also the first shard. */
export const DIRECTORY = 'DB';
const SHARD_NAME = /^DB(?:_[1-9]\d{0,3})?$/;

/** How long an isolate trusts its memo of a team's shard. A move flips the map and then waits this long
 * before it deletes the old rows, so an isolate that still routes to the old shard finds them (src/db/move.ts). */
export const SHARD_MEMO_MS = 30_000;
const memo = new Map<number, { shard: string; until: number }>();

/** The bindings the data layer may read: the directory and whatever `DB_<n>` the environment binds. */
type ShardEnv = Pick<CairnEnv, 'DB'> & Partial<Pick<CairnEnv, 'SHARD_NEW_TEAMS'>>;

const isD1 = (v: unknown): v is D1Database =>
  typeof v === 'object' && v !== null && typeof (v as D1Database).prepare === 'function';

// The env object lives as long as its isolate (or Durable Object): its bindings are listed once.
const bindings = new WeakMap<object, string[]>();

/** The shard names this Worker has bindings for, the directory first. */
export function boundShards(env: ShardEnv): readonly string[] {
  let names = bindings.get(env);
  if (!names) {
    const more = Object.keys(env).filter(
      (k) => k !== DIRECTORY && SHARD_NAME.test(k) && isD1((env as Record<string, unknown>)[k]),
    );
    names = [DIRECTORY, ...more.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))];
    bindings.set(env, names);
  }
  return names;
}

/** Every binding the data layer gets, as the settings want it (a benchmark's injected latency: db/latency.ts). */
function bound(env: ShardEnv, binding: D1Database): D1Database {
  let ms = 0;
  try {
    ms = configOf(env as Parameters<typeof configOf>[0]).benchD1LatencyMs;
  } catch {
    // Settings that do not parse answer `invalid_config` where they are needed; a binding is still a binding.
  }
  return withLatency(binding, ms);
}

/** The D1 binding of the shard named `shard`; 503 `shard_unbound` when the Worker has no such binding. */
export function shardDb(env: ShardEnv, shard: string): D1Database {
  const binding = SHARD_NAME.test(shard) ? (env as Record<string, unknown>)[shard] : undefined;
  if (!isD1(binding))
    throw new AppError(
      503,
      'shard_unbound',
      `This team's database (${shard}) is not bound to the server; the operator must add it to wrangler.toml.`,
    );
  return bound(env, binding);
}

/** Every bound database, the directory first (maintenance that visits each: FTS healing). */
export const allShardDbs = (env: ShardEnv): D1Database[] => boundShards(env).map((s) => shardDb(env, s));

/** The directory database (teams, members, tokens, the shard map). */
export const directoryDb = (env: ShardEnv): D1Database => bound(env, env.DB);

/** The name of the shard holding `teamId`, from this isolate's memo when fresh. */
export async function shardOf(env: ShardEnv, teamId: number, now = Date.now()): Promise<string> {
  if (boundShards(env).length === 1) return DIRECTORY;
  const hit = memo.get(teamId);
  if (hit && hit.until > now) return hit.shard;
  const shard = await mappedShard(env, teamId);
  memo.set(teamId, { shard, until: now + SHARD_MEMO_MS });
  return shard;
}

/** Drops this isolate's memo of the team's database (a team move told this object the team moved). */
export function forgetShard(teamId: number): void {
  memo.delete(teamId);
}

/** The shard the map names for `teamId` (the directory when it names none), read now. */
export async function mappedShard(env: ShardEnv, teamId: number): Promise<string> {
  const row = await db(directoryDb(env))
    .select({ shard: teamShards.shard })
    .from(teamShards)
    .where(eq(teamShards.teamId, teamId))
    .get();
  return row?.shard ?? DIRECTORY;
}

/** What vector ids of rows on `shard` start with in a shared vector index: nothing on `DB`, `DB_1:` on `DB_1`, … */
export const shardVectorPrefix = (shard: string): string => (shard === DIRECTORY ? '' : `${shard}:`);

/** What the team's vector ids start with (its database's prefix, shardVectorPrefix). */
export async function vectorIdPrefix(env: ShardEnv, teamId: number): Promise<string> {
  return shardVectorPrefix(await shardOf(env, teamId));
}

/** The database of `teamId`'s memory: the one function that routes a team-scoped query. */
export async function teamDb(env: ShardEnv, teamId: number): Promise<D1Database> {
  return shardDb(env, await shardOf(env, teamId));
}

export async function teamDbs(env: ShardEnv, teamId: number): Promise<TeamDbs> {
  return { teamId, dir: directoryDb(env), team: await teamDb(env, teamId) };
}

// --- placement -------------------------------------------------------------------------------------------

/** The placement rule, pure: among the open shards, the one holding the fewest teams; ties go to the first listed. */
export function chooseShard(open: readonly string[], teamsOn: ReadonlyMap<string, number>): string {
  let best = open[0] ?? DIRECTORY;
  for (const s of open) if ((teamsOn.get(s) ?? 0) < (teamsOn.get(best) ?? 0)) best = s;
  return best;
}

/** Teams per shard (the directory's count is every team without a map row), `teamId` itself not counted. */
async function teamsPerShard(dir: Db, teamId = 0): Promise<Map<string, number>> {
  const [all, mapped] = await dir.batch([
    dir.select({ n: count() }).from(teams).where(ne(teams.id, teamId)),
    dir
      .select({ shard: teamShards.shard, n: count() })
      .from(teamShards)
      .where(ne(teamShards.teamId, teamId))
      .groupBy(teamShards.shard),
  ]);
  const out = new Map(mapped.map((r) => [r.shard, r.n] as const));
  out.set(DIRECTORY, (all[0]?.n ?? 0) - mapped.reduce((n, r) => n + r.n, 0));
  return out;
}

/** The shards that take new teams (SHARD_NEW_TEAMS); `invalid_config` when one of them is not bound. */
export function openShards(env: ShardEnv): string[] {
  const open = configOf(env).shards.newTeams;
  const bound = new Set(boundShards(env));
  const unbound = open.filter((s) => !bound.has(s));
  if (unbound.length)
    throw new ConfigError(`SHARD_NEW_TEAMS names ${unbound.join(', ')}, which this Worker has no D1 binding for.`);
  return open;
}

/**
 * Places a new team by the configured rule (SHARD_NEW_TEAMS, see config.ts) and copies its directory rows
 * there. A team that already has a place keeps it. Answers the shard's name.
 */
export async function placeTeam(env: ShardEnv, teamId: number, now: number): Promise<string> {
  const dir = db(directoryDb(env));
  const placed = await dir
    .select({ shard: teamShards.shard })
    .from(teamShards)
    .where(eq(teamShards.teamId, teamId))
    .get();
  if (placed) return placed.shard;
  const open = openShards(env);
  const shard = open.length > 1 ? chooseShard(open, await teamsPerShard(dir, teamId)) : (open[0] ?? DIRECTORY);
  if (shard !== DIRECTORY) await setTeamShard(env, teamId, shard, now);
  return shard;
}

/**
 * Points the map at `shard` for `teamId` (no row for the directory) and refreshes that shard's copy of the
 * team's directory rows. Moves its rows nothing: src/db/move.ts does that around this call.
 */
export async function setTeamShard(env: ShardEnv, teamId: number, shard: string, now: number): Promise<void> {
  await syncTeamCopy({ teamId, dir: directoryDb(env), team: shardDb(env, shard) });
  const dir = db(directoryDb(env));
  if (shard === DIRECTORY) await dir.delete(teamShards).where(eq(teamShards.teamId, teamId)).run();
  else {
    await dir
      .insert(teamShards)
      .values({ teamId, shard, placedAt: now })
      .onConflictDoUpdate({ target: teamShards.teamId, set: { shard, placedAt: now } })
      .run();
  }
  memo.delete(teamId);
}

/** How many teams each shard holds (two statements, whatever the number of teams). */
export function teamCountsByShard(env: ShardEnv): Promise<Map<string, number>> {
  return teamsPerShard(db(env.DB));
}

/** Up to `limit` teams with an id above `afterId`, ascending, each with the shard it lives on (one statement). */
export async function teamsWithShards(
  env: ShardEnv,
  afterId: number,
  limit: number,
): Promise<{ id: number; slug: string; settings: string; shard: string }[]> {
  const rows = await db(directoryDb(env))
    .select({ id: teams.id, slug: teams.slug, settings: teams.settings, shard: teamShards.shard })
    .from(teams)
    .leftJoin(teamShards, eq(teamShards.teamId, teams.id))
    .where(gt(teams.id, afterId))
    .orderBy(teams.id)
    .limit(limit);
  return rows.map((r) => ({ id: r.id, slug: r.slug, settings: r.settings, shard: r.shard ?? DIRECTORY }));
}
