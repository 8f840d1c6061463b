// Every write path asks the team's gate first (write-gate.ts): refused with 503 `team_moving` and a
// Retry-After while a move of the team between databases has its writes closed (its last round), so nothing is
// written under the old database's ids once the move copies what is left.
import type { CairnEnv } from '../env';
import { directoryDb, mappedShard, shardDb, teamDb, type TeamDbs } from '../db/shards';
import { AppError } from '../lib/errors';
import { teamStub } from './team-do';
import { GATE_RETRY_MS } from './write-gate';

/** The refusal every write path answers while its team moves. */
export function teamMoving(retryAt: number, now: number): AppError {
  const seconds = Math.max(1, Math.ceil((retryAt - now) / 1000));
  return new AppError(
    503,
    'team_moving',
    `This team's memory is being moved to another database; nothing was stored. Send it again in ${seconds} s.`,
    {
      'retry-after': String(seconds),
    },
  );
}

/**
 * A write D1 refused because its team is being moved (a trigger of migration 0024: a project's key does not change
 * while a move copies the team, the other database knows projects by key) as the gate's own refusal; any other
 * error as it is.
 */
export function movingRefusal(err: unknown, now = Date.now()): unknown {
  const text = (e: unknown): string =>
    e instanceof Error ? `${e.message} ${e.cause === undefined ? '' : text(e.cause)}` : String(e);
  return /\bteam_moving\b/.test(text(err)) ? teamMoving(now + GATE_RETRY_MS, now) : err;
}

/**
 * Where the last move put a team: its database and when (both null: never moved, the shard map's answer stands);
 * and the team's row epoch, which a forget of a session or project moves.
 */
export interface Placement {
  shard: string | null;
  placedAt: number | null;
  rowEpoch: number;
}

/**
 * Lets a write for `sessionKeys` (none: a write outside any session) through the team's gate, or throws
 * `team_moving`. Answers where the last move put the team.
 */
export async function enterTeamWritePlacement(
  env: Pick<CairnEnv, 'TEAMS'>,
  teamId: number,
  sessionKeys: string[],
  now = Date.now(),
): Promise<Placement> {
  const answer = await teamStub(env, teamId).enterWrite([...new Set(sessionKeys)], now);
  if (!answer.open) throw teamMoving(answer.retryAt, now);
  return { shard: answer.shard, placedAt: answer.placedAt, rowEpoch: answer.rowEpoch };
}

/** Tells the team's writers that sessions or projects were deleted: their memos of row ids are keyed anew. */
export async function teamRowsDeleted(env: Pick<CairnEnv, 'TEAMS'>, teamId: number): Promise<void> {
  await teamStub(env, teamId).rowsDeleted();
}

/** enterTeamWritePlacement's database alone (null: the shard map's answer stands). */
export async function enterTeamWrite(
  env: Pick<CairnEnv, 'TEAMS'>,
  teamId: number,
  sessionKeys: string[],
  now = Date.now(),
): Promise<string | null> {
  return (await enterTeamWritePlacement(env, teamId, sessionKeys, now)).shard;
}

/** The team's database for a write that passed the gate (the move's answer first: an isolate's memo may lag). */
export async function writableTeamDb(env: CairnEnv, teamId: number, sessionKeys: string[] = []): Promise<D1Database> {
  const moved = await enterTeamWrite(env, teamId, sessionKeys);
  return moved !== null ? shardDb(env, moved) : teamDb(env, teamId);
}

/** Both handles of the team for a write that passed the gate. */
export async function writableTeamDbs(env: CairnEnv, teamId: number): Promise<TeamDbs> {
  return { teamId, dir: directoryDb(env), team: await writableTeamDb(env, teamId) };
}

/**
 * A job step's way through the gate (forget-project, restore): the team's databases and the one it is on, or,
 * while the team moves, how long to wait before the next step (the lane runs the move's steps meanwhile).
 */
export async function jobTeamWrite(
  env: CairnEnv,
  teamId: number,
  now: number,
): Promise<{ dbs: TeamDbs; shard: string } | { waitMs: number }> {
  const answer = await teamStub(env, teamId).enterWrite([], now);
  if (!answer.open) return { waitMs: Math.max(1_000, answer.retryAt - now) };
  const shard = answer.shard ?? (await mappedShard(env, teamId));
  return { dbs: { teamId, dir: directoryDb(env), team: shardDb(env, shard) }, shard };
}
