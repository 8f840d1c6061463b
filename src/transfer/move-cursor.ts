// The team move's parameters, cursor and limits (the job: src/transfer/move-job.ts; its phases: move-open.ts while
// the team writes, move-closed.ts while its writes are closed, move-finish.ts after the map names the new database).
import * as z from 'zod';
import { SHARD_MEMO_MS, shardDb } from '../db/shards';
import type { StepContext } from '../jobs/types';
import { log } from '../lib/log';
import type { ImportCounts } from './import';
import type { CopyCursor } from './move-copy';
import type { RecordMark } from '../db/move';
import type { ExtrasCursor } from './queries/move-extras';
import { renewTracking } from './queries/move-log';

/** How long a move waits for its team's sessions to hold nothing before it gives up (unless forced). */
export const QUIESCE_MAX_MS = 10 * 60_000;
/** After the gate closes, requests it let in just before finish; the last round starts no sooner than this. */
export const GATE_GRACE_MS = 3_000;
/** How long a session object stays held without the move releasing it (a move that died lets go by then). */
export const HOLD_MS = 10 * 60_000;
/** Pause between looks at sessions that still hold work. */
export const QUIESCE_POLL_MS = 2_000;
/** Session objects asked per step (a subrequest each). */
export const SESSIONS_PER_STEP = 40;
/** Records restored per piece: at most two statements each plus the plan's reads, well under a step's budget. */
export const MOVE_PIECE = 60;
/** Rows one delete statement takes (each observation also deletes its FTS row). */
export const DELETE_CHUNK = 200;
/** Old record ids whose vectors go per unit: one Vectorize call (1 + 8 fact vectors each, ≤ 1,000 ids a call). */
export const VECTOR_PAGE = 100;
/**
 * How long the change log keeps noting without the move renewing it (every step does): longer than a failing
 * step's retries take (2 s … 512 s, ~11 min), so only a move that died lets it lapse.
 */
export const TRACK_LEASE_MS = 30 * 60_000;
/** A lease this close to its end counts as lapsed (the triggers read the database's clock, the job its own). */
export const TRACK_MARGIN_MS = 5 * 60_000;
/** Log entries the rounds leave for the last one, which runs with the team's writes closed. */
export const TAIL_MAX = 100;
/** Rounds with writes open before the gate closes whatever is left (a team writing faster than a round copies). */
export const MAX_ROUNDS = 20;

export const MoveParams = z
  .object({
    to: z.string().regex(/^DB(?:_[1-9]\d{0,3})?$/),
    force: z.boolean().default(false),
    /** How long the old rows stay after the flip (isolates' shard memos run out meanwhile); tests shorten it. */
    settleMs: z.number().int().min(0).max(SHARD_MEMO_MS).default(SHARD_MEMO_MS),
  })
  .strict();
export type MoveParams = z.infer<typeof MoveParams>;

export type Phase =
  | 'start'
  | 'clear'
  | 'copy'
  | 'extras'
  | 'delta'
  | 'close'
  | 'quiesce'
  | 'tail'
  | 'release'
  | 'vectors'
  | 'drop'
  | 'embed'
  | 'abort'
  | 'discard';

/** Phases whose step starts with the team's writes closed (the gate closes in `close`, opens in `release`). */
export const CLOSED_PHASES: readonly Phase[] = ['close', 'quiesce', 'tail', 'release', 'abort'];

/** Where applying the change log is (move-delta.ts): a round at a time, each up to where the log stood. */
export interface LogCursor {
  /** Entries up to this one belong to an earlier move of the team. */
  since: number;
  /** The last entry applied, and the last of the round. */
  after: number;
  upTo: number;
  /** The last audit row and history event copied, and the round's last ones (ids of the old database). */
  audit: number;
  auditUpTo: number;
  events: number;
  eventsUpTo: number;
  stage: 'start' | 'log' | 'audit' | 'events' | 'done';
  round: number;
  /** Records the log deleted on the new database (their FTS segments want an upkeep pass). */
  deleted: number;
}

export interface MoveCursor {
  phase: Phase;
  moveId: string;
  from: string | null;
  /** When the gate closed (0: open). */
  closedAt: number;
  /** Sessions held; `waiting`: those still holding work at the last look. */
  held: string[];
  waiting: string[];
  /** Index into `held` of the next session to ask (quiesce, release). */
  at: number;
  /** Phase-specific position: a table number (clear, drop, discard). */
  n: number;
  copy: CopyCursor;
  projectIds: number[];
  extras: ExtrasCursor;
  log: LogCursor;
  /** The vectors phase: project (index into `projectIds`), table and the last row done. */
  vec: { p: number; t: number; from: RecordMark | null };
  flippedAt: number;
  counts: ImportCounts;
  /** Why the move gave up (abort), reported once the new database holds nothing of the team. */
  reason: string | null;
  /** Steps that ran with the team's writes closed, and for how long they were closed (ms, once open again). */
  closedSteps: number;
  closedMs: number;
}

export const zeroCounts = (): ImportCounts => ({
  users: 0,
  projects: 0,
  sessions: 0,
  prompts: 0,
  observations: 0,
  summaries: 0,
});

export const logStart = (since = 0, audit = 0, events = 0): LogCursor => ({
  since,
  after: since,
  upTo: since,
  audit,
  auditUpTo: audit,
  events,
  eventsUpTo: events,
  stage: 'start',
  round: 0,
  deleted: 0,
});

/** What a phase answers: the cursor, and for the runner a wait, the end, a result. */
export interface PhaseOut {
  c: MoveCursor;
  waitMs?: number;
  done?: boolean;
  result?: unknown;
}

export type PhaseStep = (ctx: StepContext, p: MoveParams, c: MoveCursor, teamId: number) => Promise<PhaseOut>;

/**
 * Renews the change log's lease on the old database; false when it had lapsed (the move's steps stopped for
 * longer than TRACK_LEASE_MS): changes may have gone unnoted since, so what was copied cannot be trusted.
 */
export async function stillTracked(ctx: StepContext, c: MoveCursor, teamId: number): Promise<boolean> {
  const ok = await renewTracking(
    shardDb(ctx.env, c.from!),
    teamId,
    c.moveId,
    ctx.now + TRACK_MARGIN_MS,
    ctx.now + TRACK_LEASE_MS,
  );
  if (!ok) log('warn', 'move tracking lapsed', { team_id: teamId, move: c.moveId, phase: c.phase });
  return ok;
}
