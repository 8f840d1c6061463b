// Writing an import part: in pieces of ≤ MAX_PIECE records, each planned again and written in ONE batch
// (src/transfer/import.ts), first in the request that brought the part for as long as the invocation's budget lasts
// (on Workers Paid the whole part: its rows are stored and keyword-searchable when the request answers), then by
// the part's `import` job for what is left (Free's 50 statements hold about one small piece; a team move closes the
// gate). Neither embeds: the team's `embed` job gives the new rows their vectors after the import (EMBED_AFTER_MS),
// so a client sending part after part never waits for embedding, and no import's work grows with the rows the
// team already has without vectors.
import { auditDetail } from '../db/audit';
import type { Caller } from '../db/caller';
import { currentUsage, spent } from '../db/meter';
import { PACE_MAX_MS } from '../jobs/step';
import type { CairnEnv } from '../env';
import { AppError } from '../lib/errors';
import { writableTeamDbs } from '../slots/enter-write';
import { startEmbedJob } from '../vectors/embed-job';
import { importPart } from './import';
import type { ImportCounts, Numbered } from './import-plan';

/** Statements a piece's plan reads (projects, shadows, sessions, held rows, the history lines' sessions), the gate's
 * answer and the look-up of the piece's audit row, at most. */
export const PLAN_STATEMENTS = 10;
/** Records a piece at most (its batch: ≤ 2 statements a record and one audit row), so one batch holds the
 * database briefly and other teams' statements run between pieces. */
export const MAX_PIECE = 90;
/** What a piece of `size` records may send at most: its plan, ≤ 2 statements a record, its audit row. */
export const pieceCost = (size: number): number => PLAN_STATEMENTS + 2 * size + 1;
/** Records in a piece for a budget of `statements`: the plan's reads and ≤ 2 writes a record fit in it. */
export const pieceSize = (statements: number): number =>
  Math.max(1, Math.min(MAX_PIECE, Math.floor((statements - PLAN_STATEMENTS - 1) / 2)));

/**
 * The embed job waits this long after the last import write that started it: a client sends the next part well
 * within it (a part is answered in about a second), so the vectors are made once the parts stop coming, not between
 * them. Measured: the import job that embedded each part before the next took ~20 s a part of 250 with the local
 * sentence model, against ~0.3 s to write it (bench/import-speed.bench.mjs).
 */
export const EMBED_AFTER_MS = 20_000;

/** How far a part's writing got: the next line to write and what the pieces so far added. */
export interface Written {
  next: number;
  counts: ImportCounts;
}

export interface PieceRun {
  env: CairnEnv;
  caller: Caller;
  /** The whole part; pieces are taken from `Written.next` on. */
  lines: Numbered[];
  now: number;
  /** The size of the next piece, or 0 to stop here: the request's or the step's budget decides. */
  nextSize: () => number;
  /**
   * The audit target naming the piece that starts at line index `next`, and the oldest such row to look for: a job
   * finds a piece its earlier run wrote (its batch landed, its cursor did not) by it. Null: a request, which has no
   * earlier run.
   */
  earlier: { target: (next: number) => string; since: number } | null;
  /**
   * Called between two pieces: a pause that lets other teams' statements run between this import's batches on the
   * database (and, locally, the one workerd thread) they share (a job step's `breathe`; `pacer` in a request).
   */
  between: () => Promise<void>;
}

/**
 * Writes pieces while `nextSize` allows; answers 'moving' when the team's gate is closed (nothing of that piece is
 * written), else null. A line the plan refuses is an AppError naming it and how many records were stored before.
 */
export async function writePieces(run: PieceRun, at: Written): Promise<'moving' | null> {
  while (at.next < run.lines.length) {
    const size = run.nextSize();
    if (size <= 0) return null;
    const piece = run.lines.slice(at.next, at.next + size);
    try {
      const h = await writableTeamDbs(run.env, run.caller.teamId);
      const target = run.earlier?.target(at.next) ?? null;
      const before =
        run.earlier && target !== null
          ? await auditDetail(h.team, run.caller.teamId, 'transfer.import', target, run.earlier.since)
          : null;
      const counts = before
        ? (before.imported as ImportCounts)
        : (await importPart(h, { kind: 'member', caller: run.caller }, piece, run.now, target)).counts;
      for (const k of Object.keys(at.counts) as (keyof ImportCounts)[]) at.counts[k] += counts[k] ?? 0;
    } catch (err) {
      if (err instanceof AppError && err.code === 'team_moving') return 'moving';
      // A line the plan refuses now (a key that changed hands since the part was checked): the pieces before it
      // are stored, the rest is not; sending the file again adds only what is missing.
      if (err instanceof AppError && err.status < 500)
        throw new AppError(
          err.status,
          err.code,
          `${err.message} (${at.next} of ${run.lines.length} records of this part were stored before it.)`,
          err.headers,
        );
      throw err;
    }
    at.next += piece.length;
    if (at.next < run.lines.length) await run.between();
  }
  return null;
}

/**
 * A request's `between`: pauses as long as the import worked since the last pause, at most PACE_MAX_MS (as a job
 * step's `breathe`), so a search of another team waits for one batch of this import, not for one batch per statement.
 */
export function pacer(clock: () => number = Date.now): () => Promise<void> {
  let last = clock();
  return async () => {
    const pause = Math.min(PACE_MAX_MS, clock() - last);
    if (pause > 0) await new Promise((r) => setTimeout(r, pause));
    last = clock();
  };
}

/** Subrequests (D1 statements included) a request keeps back for what follows its writes: starting a job or two. */
const REQUEST_RESERVE = 5;
/** A request writes no new piece after this long; the job takes the rest (the client's wait stays short). */
export const REQUEST_WRITE_MS = 10_000;

/**
 * The next piece's size inside a request: the largest piece whose worst case fits what is left of the invocation's
 * budget (src/db/meter.ts: its plan's subrequests, D1 statements included; `plan` when no invocation is metered), 0
 * when none does.
 */
export function requestPieces(plan: number, clock: () => number = Date.now): () => number {
  const started = clock();
  return () => {
    const u = currentUsage();
    const left = (u ? u.budget - spent(u) : plan) - REQUEST_RESERVE;
    if (clock() - started >= REQUEST_WRITE_MS || left < pieceCost(1)) return 0;
    return pieceSize(left);
  };
}

const added = (c: ImportCounts) => c.prompts + c.observations + c.summaries;

/** Queues the team's embed job for what an import added (nothing added: nothing to embed), EMBED_AFTER_MS on. */
export async function embedLater(
  env: CairnEnv,
  teamId: number,
  counts: ImportCounts,
  now: number,
): Promise<string | null> {
  return added(counts) > 0 ? startEmbedJob(env, teamId, now + EMBED_AFTER_MS) : null;
}
