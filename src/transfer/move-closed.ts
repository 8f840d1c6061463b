// A team move's phases while the team's writes are closed (move-job.ts runs them), kept short: only what the team
// wrote during the last round of the change log is left to copy. The team is quiesced by its own objects, not by
// the clocks of its clients:
//   close    the team's write gate (TeamDO, src/slots/write-gate.ts) closes: every write path answers 503
//            `team_moving` with a Retry-After; it lists every session that wrote through it;
//   quiesce  each of those SessionDOs is held (it takes no event) and reports what it still holds: events
//            buffered (waiting for their prompt too), a turn open, work after a stored turn. The move waits
//            (its turns store on the old database meanwhile) until none holds anything, or gives up after
//            QUIESCE_MAX_MS (`abort`), unless forced;
//   tail     the last round of the change log, the old database at rest; the map then names the new database
//            and the old one stops noting;
//   release  the held sessions re-point what they still hold at the new rows (found by key) and take events
//            again; the gate opens, telling writers where the team now lives.
// Giving up (`abort`): the sessions are let go, the gate opens, and `discard` (writes open again) deletes what
// the copy put on the new database before the move fails with `team_busy`: nothing of the team stays there.
import { deleteSteps, deleteTeamChunk, teamProjectIds } from '../db/move';
import { mappedShard, setTeamShard, shardDb } from '../db/shards';
import { startJob } from '../jobs/start';
import { JobFailure, type StepContext } from '../jobs/types';
import { ftsUpkeepJob } from '../search/fts-upkeep';
import { sessionStub } from '../session/session-do';
import { teamStub } from '../slots/team-do';
import {
  DELETE_CHUNK,
  GATE_GRACE_MS,
  HOLD_MS,
  QUIESCE_MAX_MS,
  QUIESCE_POLL_MS,
  SESSIONS_PER_STEP,
  stillTracked,
  type MoveCursor,
  type PhaseOut,
  type PhaseStep,
} from './move-cursor';
import { runRound } from './move-open';
import { stopTracking } from './queries/move-log';
import { teamRecordCounts } from './queries/move-rows';

/** Closes (or renews) the team's write gate for this move; answers the sessions that wrote through it. */
async function gate(ctx: StepContext, teamId: number, moveId: string): Promise<string[]> {
  const sessions = await teamStub(ctx.env, teamId).closeWrites(moveId, ctx.now);
  if (sessions === null) throw new JobFailure('team_busy', 'Another move of this team is running.');
  return sessions;
}

const giveUp = (c: MoveCursor, reason: string): PhaseOut => ({ c: { ...c, phase: 'abort', at: 0, reason } });

/** Lets the held sessions go (re-pointing what they hold at the team's rows now), then opens the gate. */
async function releaseSessions(
  ctx: StepContext,
  c: MoveCursor,
  teamId: number,
  shard: string | null,
): Promise<{ c: MoveCursor; open: boolean }> {
  let at = c.at;
  while (at < c.held.length && ctx.fits({ statements: 3, subrequests: 1 })) {
    await sessionStub(ctx.env, teamId, c.held[at++]!).releaseAfterMove(c.moveId, shard);
    if (at % SESSIONS_PER_STEP === 0) break;
  }
  if (at < c.held.length) return { c: { ...c, at }, open: false };
  const team = teamStub(ctx.env, teamId);
  await team.forgetWriters(c.held.filter((k) => !c.waiting.includes(k)));
  await team.openWrites(c.moveId, shard, ctx.now);
  return { c: { ...c, at, closedMs: ctx.now - c.closedAt }, open: true };
}

export const CLOSED_PHASES_STEPS: Record<'close' | 'quiesce' | 'tail' | 'release' | 'abort' | 'discard', PhaseStep> = {
  async close(ctx, _p, c, teamId) {
    const sessions = await gate(ctx, teamId, c.moveId);
    return { c: { ...c, held: sessions, waiting: [], at: 0, closedAt: ctx.now, phase: 'quiesce' } };
  },

  async quiesce(ctx, p, c, teamId) {
    await gate(ctx, teamId, c.moveId);
    if (!(await stillTracked(ctx, c, teamId))) return giveUp(c, 'its change log lapsed while it waited');
    const next = { ...c, waiting: [...c.waiting] };
    while (next.at < next.held.length && ctx.fits({ statements: 0, subrequests: 1 })) {
      const key = next.held[next.at++]!;
      const q = await sessionStub(ctx.env, teamId, key).holdForMove(c.moveId, ctx.now + HOLD_MS);
      if (!q.quiet) next.waiting.push(key);
      if (next.at % SESSIONS_PER_STEP === 0) break;
    }
    if (next.at < next.held.length) return { c: next };
    // A full round: every session answered. Quiet and past the grace: the last round. Still busy: look again.
    if (next.waiting.length === 0 || p.force) {
      const wait = c.closedAt + GATE_GRACE_MS - ctx.now;
      if (wait > 0) return { c: { ...next, at: next.held.length }, waitMs: wait };
      return {
        c: { ...next, phase: 'tail', waiting: [], log: { ...next.log, stage: 'start', round: next.log.round + 1 } },
      };
    }
    if (ctx.now - c.closedAt > QUIESCE_MAX_MS)
      return giveUp(
        next,
        `${next.waiting.length} session(s) still hold events or an open turn after ${QUIESCE_MAX_MS / 60_000} minutes`,
      );
    // Look again at the busy ones only (the quiet ones stay held).
    const quiet = next.held.filter((k) => !next.waiting.includes(k));
    return {
      c: { ...next, held: [...quiet, ...next.waiting], at: quiet.length, waiting: [] },
      waitMs: QUIESCE_POLL_MS,
    };
  },

  async tail(ctx, p, c, teamId) {
    await gate(ctx, teamId, c.moveId);
    const source = shardDb(ctx.env, c.from!);
    // Run again after the map was flipped (its invocation died before the cursor was saved): only the end is left.
    if ((await mappedShard(ctx.env, teamId)) === p.to) {
      await stopTracking(source, teamId);
      return { c: { ...c, phase: 'release', at: 0, flippedAt: c.flippedAt || ctx.now } };
    }
    if (!(await stillTracked(ctx, c, teamId))) return giveUp(c, 'its change log lapsed');
    const l = await runRound(ctx, c, teamId, p.to);
    if (l.stage !== 'done') return { c: { ...c, log: l } };
    const counts = await teamRecordCounts(shardDb(ctx.env, p.to), teamId);
    await setTeamShard(ctx.env, teamId, p.to, ctx.now);
    await stopTracking(source, teamId);
    return { c: { ...c, log: l, counts, phase: 'release', at: 0, flippedAt: ctx.now } };
  },

  async release(ctx, p, c, teamId) {
    const out = await releaseSessions(ctx, c, teamId, p.to);
    if (!out.open) return { c: out.c };
    // The old rows' vectors go next, walked project by project: every project the old database holds now.
    const projectIds = await teamProjectIds(shardDb(ctx.env, c.from!), teamId);
    return { c: { ...out.c, phase: 'vectors', projectIds, vec: { p: 0, t: 0, from: null } } };
  },

  async abort(ctx, _p, c, teamId) {
    const out = await releaseSessions(ctx, c, teamId, null);
    return { c: out.open ? { ...out.c, phase: 'discard', n: 0 } : out.c };
  },

  async discard(ctx, p, c, teamId) {
    // Writes are open again: what the copy put on the new database goes, a chunk at a time.
    const target = shardDb(ctx.env, p.to);
    let n = c.n;
    while (n < deleteSteps(false) && ctx.fits({ statements: 1 })) {
      if ((await deleteTeamChunk(target, teamId, n, DELETE_CHUNK)) === 0) n++;
      await ctx.breathe();
    }
    if (n < deleteSteps(false)) return { c: { ...c, n } };
    await stopTracking(shardDb(ctx.env, c.from!), teamId);
    // The deleted rows' text stays in the FTS segments until they are merged.
    await startJob(ctx.env, ftsUpkeepJob, null, { shard: p.to, check: false });
    throw new JobFailure(
      'team_busy',
      `The team was not moved: ${c.reason ?? 'its sessions did not come to rest'}. Nothing changed; try again later, or with "force": true.`,
    );
  },
};
