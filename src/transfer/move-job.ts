// The team move as a job (src/jobs/): a team goes from one D1 database to another in bounded steps, each its
// own invocation of the team's job lane, so a move of any size never holds a database, or the service, for
// long. The team is quiesced by its own objects, not by the clocks of its clients:
//   close    the team's write gate (TeamDO, src/slots/write-gate.ts) closes: ingest, `remember` and import
//            answer 503 `team_moving` with a Retry-After; it lists every session that wrote through it;
//   quiesce  each of those SessionDOs is held (it takes no event) and reports what it still holds: events
//            buffered (waiting for their prompt too), a turn open, work after a stored turn. The move waits
//            (its turns store on the old database meanwhile) until none holds anything, or gives up after
//            QUIESCE_MAX_MS and opens the gate again (`team_busy`), unless forced;
//   clear    what an interrupted earlier move left on the target goes;
//   copy     the records, a piece at a time, restored through the import's one write path;
//   extras   the audit log, observer usage, aliases and the observations' correction history (move-extras.ts);
//   vectors  the old rows' vectors go (their ids are the old database's);
//   flip     the shard map points at the target;
//   release  the held sessions re-point what they still hold at the new rows (found by key) and take events
//            again; the gate opens, telling writers where the team now lives;
//   drop     after the shard memo's lifetime, the old database is emptied of the team, a chunk at a time;
//   embed    an `embed` job gives the moved rows their vectors.
// Every row stored anywhere must name a session and a project of its own team (migration 0015 refuses any
// other), so a session object that kept an old id can fail a turn, never file it under another team's rows.
import * as z from 'zod';
import {
  deleteSteps,
  deleteTeamChunk,
  projectRecordPage,
  teamProjectIds,
  type RecordMark,
  type RecordTable,
} from '../db/move';
import { copyExtrasPage, EXTRAS_DONE, type ExtrasCursor } from './queries/move-extras';
import {
  DIRECTORY,
  SHARD_MEMO_MS,
  directoryDb,
  mappedShard,
  setTeamShard,
  shardDb,
  syncTeamCopy,
  type TeamDbs,
} from '../db/shards';
import { jobStub } from '../jobs/job-do';
import { JobFailure, type JobKind, type StepContext } from '../jobs/types';
import { exemptFromFree } from '../db/meter';
import { sessionStub } from '../session/session-do';
import { teamStub } from '../slots/team-do';
import { getVectorAdapters } from '../vectors/adapters';
import { deleteRecordVectors } from '../vectors/index-records';
import { importPart, numbered, type ImportCounts } from './import';
import { COPY_START, nextRecords, type CopyCursor } from './move-copy';

/** How long a move waits for its team's sessions to hold nothing before it gives up (unless forced). */
export const QUIESCE_MAX_MS = 10 * 60_000;
/** After the gate closes, requests it let in just before finish; the copy starts no sooner than this. */
export const GATE_GRACE_MS = 3_000;
/** How long a session object stays held without the move releasing it (a move that died lets go by then). */
const HOLD_MS = 10 * 60_000;
/** Pause between looks at sessions that still hold work. */
const QUIESCE_POLL_MS = 2_000;
/** Session objects asked per step (a subrequest each). */
const SESSIONS_PER_STEP = 40;
/** Records restored per piece: at most two statements each plus the plan's reads, well under a step's budget. */
export const MOVE_PIECE = 60;
/** Rows one delete statement takes (each observation also deletes its FTS row). */
const DELETE_CHUNK = 200;
/** Old record ids whose vectors go per unit: one Vectorize call (1 + 8 fact vectors each, ≤ 1,000 ids a call). */
export const VECTOR_PAGE = 100;
const VECTOR_TABLES: readonly RecordTable[] = ['observations', 'summaries', 'prompts'];

export const MoveParams = z
  .object({
    to: z.string().regex(/^DB(?:_[1-9]\d{0,3})?$/),
    force: z.boolean().default(false),
    /** How long the old rows stay after the flip (isolates' shard memos run out meanwhile); tests shorten it. */
    settleMs: z.number().int().min(0).max(SHARD_MEMO_MS).default(SHARD_MEMO_MS),
  })
  .strict();
export type MoveParams = z.infer<typeof MoveParams>;

type Phase =
  | 'close'
  | 'quiesce'
  | 'clear'
  | 'copy'
  | 'extras'
  | 'vectors'
  | 'flip'
  | 'release'
  | 'drop'
  | 'embed'
  | 'abort';

export interface MoveCursor {
  phase: Phase;
  moveId: string;
  from: string | null;
  closedAt: number;
  /** Sessions held; `waiting`: those still holding work at the last look. */
  held: string[];
  waiting: string[];
  /** Index into `held` of the next session to ask (quiesce, release). */
  at: number;
  /** Phase-specific position: a table number (clear, drop). */
  n: number;
  /** The vectors phase: project (index into `projectIds`), table (VECTOR_TABLES) and the last row done. */
  vec: { p: number; t: number; from: RecordMark | null };
  copy: CopyCursor;
  projectIds: number[];
  extras: ExtrasCursor;
  flippedAt: number;
  counts: ImportCounts;
  /** Why the move gave up (abort), reported when the sessions are released. */
  reason: string | null;
}

/** Which count a copied record adds to. */
const KIND_COUNT: Partial<Record<string, keyof ImportCounts>> = {
  user: 'users',
  project: 'projects',
  session: 'sessions',
  prompt: 'prompts',
  observation: 'observations',
  summary: 'summaries',
};

const zero = (): ImportCounts => ({ users: 0, projects: 0, sessions: 0, prompts: 0, observations: 0, summaries: 0 });

const progressOf = (c: MoveCursor) => ({
  done: c.counts.observations + c.counts.summaries + c.counts.prompts,
  total: null,
  unit: 'records',
  phase: c.phase,
});

const STEPS: Record<
  Phase,
  (
    ctx: StepContext,
    p: MoveParams,
    c: MoveCursor,
    teamId: number,
  ) => Promise<{ c: MoveCursor; waitMs?: number; done?: boolean; result?: unknown }>
> = {
  async close(ctx, p, c, teamId) {
    const from = await mappedShard(ctx.env, teamId);
    const sessions = await gate(ctx, teamId, c.moveId);
    if (from === p.to)
      return {
        c: { ...c, from, held: sessions, phase: 'release', reason: null },
        result: { from, to: p.to, moved: false },
      };
    return { c: { ...c, from, held: sessions, waiting: [], at: 0, closedAt: ctx.now, phase: 'quiesce' } };
  },

  async quiesce(ctx, p, c, teamId) {
    await gate(ctx, teamId, c.moveId);
    const next = { ...c, waiting: [...c.waiting] };
    while (next.at < next.held.length && ctx.fits({ statements: 0, subrequests: 1 })) {
      const key = next.held[next.at++]!;
      const q = await sessionStub(ctx.env, teamId, key).holdForMove(c.moveId, ctx.now + HOLD_MS);
      if (!q.quiet) next.waiting.push(key);
      if (next.at % SESSIONS_PER_STEP === 0) break;
    }
    if (next.at < next.held.length) return { c: next };
    // A full round: every session answered. Quiet and past the grace: copy. Still busy: look again, or give up.
    if (next.waiting.length === 0 || p.force) {
      const wait = c.closedAt + GATE_GRACE_MS - ctx.now;
      if (wait > 0) return { c: { ...next, at: next.held.length }, waitMs: wait };
      return { c: { ...next, phase: 'clear', n: 0, waiting: [] } };
    }
    if (ctx.now - c.closedAt > QUIESCE_MAX_MS) {
      return {
        c: {
          ...next,
          phase: 'abort',
          at: 0,
          reason: `${next.waiting.length} session(s) still hold events or an open turn after ${QUIESCE_MAX_MS / 60_000} minutes`,
        },
      };
    }
    // Look again at the busy ones only (the quiet ones stay held).
    const quiet = next.held.filter((k) => !next.waiting.includes(k));
    return {
      c: { ...next, held: [...quiet, ...next.waiting], at: quiet.length, waiting: [] },
      waitMs: QUIESCE_POLL_MS,
    };
  },

  async clear(ctx, p, c, teamId) {
    await gate(ctx, teamId, c.moveId);
    const target = shardDb(ctx.env, p.to);
    let n = c.n;
    while (n < deleteSteps(false) && ctx.fits({ statements: 1 })) {
      if ((await deleteTeamChunk(target, teamId, n, DELETE_CHUNK)) === 0) n++;
      await ctx.breathe();
    }
    if (n < deleteSteps(false)) return { c: { ...c, n } };
    // The member rows the memory references are copied there before it.
    await syncTeamCopy({ teamId, dir: directoryDb(ctx.env), team: target });
    return {
      c: {
        ...c,
        n: 0,
        phase: 'copy',
        copy: COPY_START,
        projectIds: await teamProjectIds(shardDb(ctx.env, c.from!), teamId),
      },
    };
  },

  async copy(ctx, p, c, teamId) {
    await gate(ctx, teamId, c.moveId);
    const source = shardDb(ctx.env, c.from!);
    const target: TeamDbs = { teamId, dir: directoryDb(ctx.env), team: shardDb(ctx.env, p.to) };
    let cursor = c.copy;
    const counts = { ...c.counts };
    while (ctx.fits({ statements: 2 * MOVE_PIECE + 12 })) {
      const piece = await nextRecords(source, teamId, c.projectIds, cursor, MOVE_PIECE);
      if (piece.records.length) {
        await importPart(target, { kind: 'restore' }, numbered(piece.records), ctx.now);
        // What the piece carried, stored now or by an earlier run of this step (what importPart answers counts only
        // rows it added: a step run again after its batch landed would report none of them).
        for (const r of piece.records) if (r.kind in KIND_COUNT) counts[KIND_COUNT[r.kind]!]++;
      }
      cursor = piece.cursor;
      if (piece.done) return { c: { ...c, copy: cursor, counts, phase: 'extras', extras: { part: 0, after: 0 } } };
    }
    return { c: { ...c, copy: cursor, counts } };
  },

  async extras(ctx, p, c, teamId) {
    await gate(ctx, teamId, c.moveId);
    let e = c.extras;
    // A page: ≤ 100 rows in one batch and ≤ 6 reads; a page done again (a step run twice) adds nothing.
    while (e.part < EXTRAS_DONE && ctx.fits({ statements: 110 }))
      e = await copyExtrasPage(shardDb(ctx.env, c.from!), shardDb(ctx.env, p.to), teamId, e, 100);
    return {
      c: {
        ...c,
        extras: e,
        ...(e.part >= EXTRAS_DONE ? { phase: 'vectors' as const, vec: { p: 0, t: 0, from: null } } : {}),
      },
    };
  },

  async vectors(ctx, _p, c, teamId) {
    await gate(ctx, teamId, c.moveId);
    // The old rows' vectors go while the team still routes to the old database (their ids are that database's).
    // A page at a time, by a cursor over each project's records: a step reads about the ids it deletes.
    const source = shardDb(ctx.env, c.from!);
    let v = c.vec;
    while (v.p < c.projectIds.length && ctx.fits({ statements: 2, subrequests: 1 })) {
      const table = VECTOR_TABLES[v.t]!;
      const page = await projectRecordPage(source, teamId, table, c.projectIds[v.p]!, v.from, VECTOR_PAGE);
      if (page.length) {
        await deleteRecordVectors(getVectorAdapters(ctx.env), teamId, { [table]: page.map((r) => r.id) });
      }
      if (page.length === VECTOR_PAGE) v = { ...v, from: page[page.length - 1]! };
      else v = v.t + 1 < VECTOR_TABLES.length ? { p: v.p, t: v.t + 1, from: null } : { p: v.p + 1, t: 0, from: null };
    }
    return { c: { ...c, vec: v, ...(v.p >= c.projectIds.length ? { phase: 'flip' as const } : {}) } };
  },

  async flip(ctx, p, c, teamId) {
    await gate(ctx, teamId, c.moveId);
    await setTeamShard(ctx.env, teamId, p.to, ctx.now);
    return { c: { ...c, phase: 'release', at: 0, flippedAt: ctx.now } };
  },

  async release(ctx, p, c, teamId) {
    return releaseSessions(ctx, c, teamId, c.from === p.to ? null : p.to, 'drop');
  },

  async abort(ctx, _p, c, teamId) {
    return releaseSessions(ctx, c, teamId, null, 'abort');
  },

  async drop(ctx, p, c, teamId) {
    // Isolates trust their memo of the team's database for SHARD_MEMO_MS: the old rows stay until it ran out.
    const wait = c.flippedAt + p.settleMs - ctx.now;
    if (wait > 0) return { c, waitMs: wait };
    const source = shardDb(ctx.env, c.from!);
    const steps = deleteSteps(c.from !== DIRECTORY);
    let n = c.n;
    while (n < steps && ctx.fits({ statements: 1 })) {
      if ((await deleteTeamChunk(source, teamId, n, DELETE_CHUNK)) === 0) n++;
      // The old database serves other teams: room for their statements between two deletes.
      await ctx.breathe();
    }
    return { c: { ...c, n, ...(n >= steps ? { phase: 'embed' as const } : {}) } };
  },

  async embed(ctx, p, c, teamId) {
    // The moved rows have new ids on the new database and no vectors yet: the embed job gives them theirs.
    await jobStub(ctx.env, teamId).start({
      kind: 'embed',
      params: { mode: 'missing' },
      teamId,
      actorUserId: null,
      actor: null,
    });
    return { c, done: true, result: { from: c.from, to: p.to, moved: true, counts: c.counts } };
  },
};

/** Closes (or renews) the team's write gate for this move; answers the sessions that wrote through it. */
async function gate(ctx: StepContext, teamId: number, moveId: string): Promise<string[]> {
  const sessions = await teamStub(ctx.env, teamId).closeWrites(moveId, ctx.now);
  if (sessions === null) throw new JobFailure('team_busy', 'Another move of this team is running.');
  return sessions;
}

/** Lets the held sessions go (re-pointing what they hold at the team's rows now), then opens the gate. */
async function releaseSessions(
  ctx: StepContext,
  c: MoveCursor,
  teamId: number,
  shard: string | null,
  then: 'drop' | 'abort',
) {
  let at = c.at;
  while (at < c.held.length && ctx.fits({ statements: 3, subrequests: 1 })) {
    await sessionStub(ctx.env, teamId, c.held[at++]!).releaseAfterMove(c.moveId, shard);
    if (at % SESSIONS_PER_STEP === 0) break;
  }
  if (at < c.held.length) return { c: { ...c, at } };
  const team = teamStub(ctx.env, teamId);
  await team.forgetWriters(c.held.filter((k) => !c.waiting.includes(k)));
  await team.openWrites(c.moveId, shard, ctx.now);
  if (then === 'abort')
    throw new JobFailure(
      'team_busy',
      `The team was not moved: ${c.reason ?? 'its sessions did not come to rest'}. Nothing changed; try again later, or with "force": true.`,
    );
  if (shard === null) return { c: { ...c, at }, done: true, result: { from: c.from, to: c.from, moved: false } };
  return { c: { ...c, at, n: 0, phase: 'drop' as const } };
}

export const moveJob: JobKind<MoveParams, MoveCursor> = {
  name: 'move-team',
  lane: 'team',
  params: MoveParams,
  dedupe: () => 'move-team',
  init: () => {
    const cursor: MoveCursor = {
      phase: 'close',
      moveId: crypto.randomUUID(),
      from: null,
      closedAt: 0,
      held: [],
      waiting: [],
      at: 0,
      n: 0,
      vec: { p: 0, t: 0, from: null },
      copy: COPY_START,
      projectIds: [],
      extras: { part: 0, after: 0 },
      flippedAt: 0,
      counts: zero(),
      reason: null,
    };
    return { cursor, progress: progressOf(cursor) };
  },
  async step(ctx, params, cursor) {
    if (ctx.teamId === null) throw new JobFailure('team_required', 'A move runs for one team.');
    // Units of 110 statements (extras) and 500 vector ids (3 calls a 100) do not fit Free's 50 (src/db/meter.ts).
    exemptFromFree('issue 35: the move steps past Free budget (its vectors phase and pages are being reworked)');
    const out = await STEPS[cursor.phase](ctx, params, cursor, ctx.teamId);
    return {
      cursor: out.c,
      done: out.done ?? false,
      progress: progressOf(out.c),
      result: out.result,
      waitMs: out.waitMs,
    };
  },
};
