// A team move's phases while the team writes (move-job.ts runs them): the new database is cleared of what an
// earlier move left there, the old one starts noting every change of the team's rows (its change log, migration
// 0024), the records and the rows the export leaves out are copied, and the log is applied in rounds until what is
// left is small. Nothing here closes the team's write gate.
import { deleteSteps, deleteTeamChunk, teamProjectIds } from '../db/move';
import { directoryDb, mappedShard, shardDb, syncTeamCopy, type TeamDbs } from '../db/shards';
import type { StepContext } from '../jobs/types';
import { importPart, numbered } from './import';
import { COPY_START, nextRecords } from './move-copy';
import {
  DELETE_CHUNK,
  logStart,
  MAX_ROUNDS,
  MOVE_PIECE,
  stillTracked,
  TAIL_MAX,
  TRACK_LEASE_MS,
  zeroCounts,
  type LogCursor,
  type MoveCursor,
  type PhaseStep,
} from './move-cursor';
import { applyLogPage, PAGE_OVERHEAD, STATEMENTS_PER_ENTRY } from './move-delta';
import { copyExtrasPage, EXTRAS_DONE } from './queries/move-extras';
import { logBacklog, logEnd, logPage, startTracking } from './queries/move-log';
import type { ImportCounts } from './import';

/** Which count a copied record adds to. */
const KIND_COUNT: Partial<Record<string, keyof ImportCounts>> = {
  user: 'users',
  project: 'projects',
  session: 'sessions',
  prompt: 'prompts',
  observation: 'observations',
  summary: 'summaries',
};

/** The copy starts again from a clear target: the change log lapsed, so what was copied may miss changes. */
const restart = (c: MoveCursor): MoveCursor => ({ ...c, phase: 'clear', n: 0 });

const dbsOf = (ctx: StepContext, teamId: number, to: string): TeamDbs => ({
  teamId,
  dir: directoryDb(ctx.env),
  team: shardDb(ctx.env, to),
});

/** Log entries a page takes: as many as the step's budget allows beside the page's reads, at most 50. */
export const pageOf = (ctx: StepContext): number =>
  Math.max(1, Math.min(50, Math.floor((ctx.budget.statements - PAGE_OVERHEAD) / STATEMENTS_PER_ENTRY)));

/** Rows an extras page copies in its batch (≤ 100, beside ≤ 6 reads): within the step's budget (40 on Free). */
const extrasPageOf = (ctx: StepContext): number => Math.max(1, Math.min(100, ctx.budget.statements - 10));

/** Statements a copy piece costs beside its records' writes: its reads, the import's plan, a new project's lines. */
const PIECE_OVERHEAD = 30;

/** Records a copy piece restores (≤ 2 statements each, beside PIECE_OVERHEAD): 60 on Paid, 5 on Free. */
const pieceOf = (ctx: StepContext): number =>
  Math.max(1, Math.min(MOVE_PIECE, Math.floor((ctx.budget.statements - PIECE_OVERHEAD) / 2)));

/**
 * One round of the change log, as far as the step's budget goes: the entries up to where the log stood when the
 * round began, then the audit rows and history events up to the same moment (each a page of ≤ 100 in a batch;
 * a page done again adds nothing). Answers the cursor; stage `done` when the round is over.
 */
export async function runRound(ctx: StepContext, c: MoveCursor, teamId: number, to: string): Promise<LogCursor> {
  const source = shardDb(ctx.env, c.from!);
  const h = dbsOf(ctx, teamId, to);
  let l = { ...c.log };
  if (l.stage === 'start' || l.stage === 'done') {
    const end = await logEnd(source, teamId);
    // Members added since the copy began: their rows first, records name them.
    await syncTeamCopy(h);
    l = { ...l, upTo: end.since, auditUpTo: end.audit, eventsUpTo: end.events, stage: 'log' };
  }
  const page = pageOf(ctx);
  while (l.stage === 'log' && ctx.fits({ statements: STATEMENTS_PER_ENTRY * page + PAGE_OVERHEAD })) {
    const entries = await logPage(source, teamId, l.after, l.upTo, page);
    if (entries.length) {
      l.deleted += await applyLogPage(source, h, entries, ctx.now);
      l.after = entries[entries.length - 1]!.seq;
    }
    if (entries.length < page) l.stage = 'audit';
  }
  const rows = extrasPageOf(ctx);
  while (l.stage === 'audit' && ctx.fits({ statements: rows + 10 })) {
    const e = await copyExtrasPage(source, h.team, teamId, { part: 0, after: l.audit, auditUpTo: l.auditUpTo }, rows);
    l = e.part === 0 ? { ...l, audit: e.after } : { ...l, audit: l.auditUpTo, stage: 'events' };
  }
  while (l.stage === 'events' && ctx.fits({ statements: rows + 10 })) {
    const e = await copyExtrasPage(
      source,
      h.team,
      teamId,
      { part: 5, after: l.events, eventsUpTo: l.eventsUpTo },
      rows,
    );
    l = e.part === 5 ? { ...l, events: e.after } : { ...l, events: l.eventsUpTo, stage: 'done' };
  }
  return l;
}

export const OPEN_PHASES: Record<'start' | 'clear' | 'copy' | 'extras' | 'delta', PhaseStep> = {
  async start(ctx, p, c, teamId) {
    const from = await mappedShard(ctx.env, teamId);
    if (from === p.to) return { c: { ...c, from }, done: true, result: { from, to: p.to, moved: false } };
    return { c: { ...c, from, phase: 'clear', n: 0 } };
  },

  async clear(ctx, p, c, teamId) {
    const target = shardDb(ctx.env, p.to);
    let n = c.n;
    while (n < deleteSteps(false) && ctx.fits({ statements: 1 })) {
      if ((await deleteTeamChunk(target, teamId, n, DELETE_CHUNK)) === 0) n++;
      await ctx.breathe();
    }
    if (n < deleteSteps(false)) return { c: { ...c, n } };
    // The member rows the memory references are copied there before it.
    await syncTeamCopy(dbsOf(ctx, teamId, p.to));
    // From here every change of the team's rows on the old database is noted: what the copy reads may change
    // after it read it, and the log says what did.
    const source = shardDb(ctx.env, c.from!);
    const t = await startTracking(source, teamId, c.moveId, ctx.now + TRACK_LEASE_MS);
    return {
      c: {
        ...c,
        n: 0,
        phase: 'copy',
        copy: COPY_START,
        counts: zeroCounts(),
        projectIds: await teamProjectIds(source, teamId),
        // Events up to where the log began: a later one may name a record the copy passed before it was made.
        extras: { part: 0, after: 0, eventsUpTo: t.events },
        log: logStart(t.since, t.audit, t.events),
      },
    };
  },

  async copy(ctx, p, c, teamId) {
    if (!(await stillTracked(ctx, c, teamId))) return { c: restart(c) };
    const source = shardDb(ctx.env, c.from!);
    const target = dbsOf(ctx, teamId, p.to);
    let cursor = c.copy;
    const counts = { ...c.counts };
    const piece = pieceOf(ctx);
    while (ctx.fits({ statements: 2 * piece + PIECE_OVERHEAD })) {
      const next = await nextRecords(source, teamId, c.projectIds, cursor, piece);
      if (next.records.length) {
        await importPart(target, { kind: 'restore' }, numbered(next.records), ctx.now);
        // What the piece carried, stored now or by an earlier run of this step (importPart counts only the rows
        // it added: a step run again after its batch landed would report none of them).
        for (const r of next.records) if (r.kind in KIND_COUNT) counts[KIND_COUNT[r.kind]!]++;
      }
      cursor = next.cursor;
      if (next.done) return { c: { ...c, copy: cursor, counts, phase: 'extras' } };
    }
    return { c: { ...c, copy: cursor, counts } };
  },

  async extras(ctx, p, c, teamId) {
    if (!(await stillTracked(ctx, c, teamId))) return { c: restart(c) };
    let e = c.extras;
    // A page: ≤ 100 rows in one batch and ≤ 6 reads; a page done again (a step run twice) adds nothing.
    const rows = extrasPageOf(ctx);
    while (e.part < EXTRAS_DONE && ctx.fits({ statements: rows + 10 }))
      e = await copyExtrasPage(shardDb(ctx.env, c.from!), shardDb(ctx.env, p.to), teamId, e, rows);
    return { c: { ...c, extras: e, ...(e.part >= EXTRAS_DONE ? { phase: 'delta' as const } : {}) } };
  },

  async delta(ctx, p, c, teamId) {
    if (!(await stillTracked(ctx, c, teamId))) return { c: restart(c) };
    const l = await runRound(ctx, c, teamId, p.to);
    if (l.stage !== 'done') return { c: { ...c, log: l } };
    // A round is over: close the gate once what the team wrote meanwhile is small enough for the last round.
    const left = await logBacklog(shardDb(ctx.env, c.from!), teamId, l.after);
    if (left <= TAIL_MAX || l.round + 1 >= MAX_ROUNDS) return { c: { ...c, log: l, phase: 'close' } };
    return { c: { ...c, log: { ...l, stage: 'start', round: l.round + 1 } } };
  },
};
