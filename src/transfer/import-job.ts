// The `import` job: one part of an admin's NDJSON import (POST /api/admin/import), written and embedded in
// bounded steps. The request parses every line and plans the whole part by reads alone (a refused line is a 4xx
// at once, nothing stored), then starts this job with the part and answers its id. A step writes the part in
// pieces (as many records as fit the step's statement budget, each piece planned again and written in one batch,
// src/transfer/import.ts) and then embeds the team's rows without vectors as the `embed` job does: ≤ 100 texts an
// embedding call, upserted and marked embedded per chunk, one chunk of vectors held. A piece written again after
// a restart adds nothing (rows are matched by key and content hash) and counts what the first run added (its
// audit row), and embedding by `embedded_at` picks up exactly the rows not yet embedded, so a restart between
// steps loses and repeats nothing. A part is stored piece by piece, not all or nothing: a job that fails after
// its first piece keeps the pieces before (it says how many records), and sending the part again adds the rest.
import * as z from 'zod';
import { auditDetail } from '../db/audit';
import type { Caller } from '../db/caller';
import { JobFailure, type JobKind, type StepContext } from '../jobs/types';
import { AppError } from '../lib/errors';
import type { JobProgress } from '#shared/jobs';
import { writableTeamDbs } from '../slots/enter-write';
import { embedJob } from '../vectors/embed-job';
import { importPart, MAX_IMPORT_LINES } from './import';
import { noCounts, type ImportCounts, type Numbered } from './import-plan';
import { ExportRecord } from './records';

/** Statements a piece's plan reads (projects, shadows, sessions, held rows, the history lines' sessions), the gate's answer and the look-up
 * of the piece's audit row, at most. */
const PLAN_STATEMENTS = 10;
/** Records a piece at most (its batch: ≤ 2 statements a record and one audit row). */
const MAX_PIECE = 90;
/** How long a step waits for a team move to end before it asks the gate again. */
const MOVING_WAIT_MS = 5_000;

/** Records in a piece for a step budget of `statements`: the plan's reads and ≤ 2 writes a record fit in it. */
export const pieceSize = (statements: number): number =>
  Math.max(1, Math.min(MAX_PIECE, Math.floor((statements - PLAN_STATEMENTS - 1) / 2)));

const Params = z
  .object({
    caller: z
      .object({
        teamId: z.number().int().positive(),
        userId: z.number().int().positive(),
        handle: z.string().min(1).max(64),
      })
      .strict(),
    lines: z
      .array(z.object({ line: z.number().int().positive(), record: ExportRecord }).strict())
      .min(1)
      .max(MAX_IMPORT_LINES),
  })
  .strict();
type Params = z.infer<typeof Params>;

type EmbedCursor = Parameters<typeof embedJob.step>[2];

interface Cursor {
  /** Lines written so far (the next piece starts here). */
  next: number;
  counts: ImportCounts;
  /** The embed phase's own cursor, once the writes are done. */
  embed: EmbedCursor | null;
  /** When the job began: its pieces' audit rows are no older (absent in jobs queued before it was kept). */
  since?: number;
}

const progress = (p: Params, c: Cursor): JobProgress =>
  c.embed === null
    ? { done: c.next, total: p.lines.length, unit: 'records', phase: 'writing records' }
    : { done: c.embed.done, total: c.embed.total, unit: 'records', phase: 'embedding new records' };

// What the part added, as the request used to answer it. Not how many rows were embedded: the embed phase takes
// every row of the team still without a vector, a teammate's too, so that count would tell about others' rows.
const result = (p: Params, c: Cursor) => ({ records: p.lines.length, imported: { ...c.counts } });

export const importJob: JobKind<Params, Cursor> = {
  name: 'import',
  lane: 'team',
  params: Params,
  init: (p, { now }) => {
    const cursor: Cursor = { next: 0, counts: noCounts(), embed: null, since: now };
    return { cursor, progress: progress(p, cursor) };
  },
  async step(ctx, p, start) {
    if (ctx.teamId === null || ctx.teamId !== p.caller.teamId)
      throw new JobFailure('team_required', "An import runs in the importing team's lane.");
    const c: Cursor = { ...start, counts: { ...start.counts } };
    if (c.embed === null) {
      const waited = await writePieces(ctx, p, c);
      if (waited !== null)
        return {
          cursor: c,
          done: false,
          progress: { ...progress(p, c), phase: 'waiting for the team move to end' },
          waitMs: waited,
        };
      if (c.next < p.lines.length) return { cursor: c, done: false, progress: progress(p, c), result: result(p, c) };
      c.embed = embedJob.init({ mode: 'missing' }, { teamId: ctx.teamId, now: ctx.now }).cursor;
    }
    // The embed job's step in this step's context: it stops where the budget ends, as it does on its own.
    const out = await embedJob.step(ctx, { mode: 'missing' }, c.embed);
    c.embed = out.cursor;
    return {
      cursor: c,
      done: out.done,
      progress: out.done
        ? { done: p.lines.length, total: p.lines.length, unit: 'records', phase: 'done' }
        : progress(p, c),
      result: result(p, c),
    };
  },
};

/** Writes pieces while they fit; answers ms to wait when the team is moving, else null. */
async function writePieces(ctx: StepContext, p: Params, c: Cursor): Promise<number | null> {
  const size = pieceSize(ctx.budget.statements);
  const caller: Caller = p.caller;
  while (c.next < p.lines.length && ctx.fits({ statements: PLAN_STATEMENTS + 2 * size + 1, subrequests: 1 })) {
    const piece: Numbered[] = p.lines.slice(c.next, c.next + size);
    try {
      const h = await writableTeamDbs(ctx.env, caller.teamId);
      // A piece this job wrote before a restart (its batch landed, the cursor after it did not) is found by its
      // audit row, written in the same batch: its counts are taken from there, not planned again as nothing new.
      const target = `import:${ctx.jobId}:${c.next}`;
      const earlier = await auditDetail(h.team, caller.teamId, 'transfer.import', target, c.since ?? 0);
      const counts = earlier
        ? (earlier.imported as ImportCounts)
        : (await importPart(h, { kind: 'member', caller }, piece, ctx.now, target)).counts;
      for (const k of Object.keys(c.counts) as (keyof ImportCounts)[]) c.counts[k] += counts[k] ?? 0;
    } catch (err) {
      if (err instanceof AppError && err.code === 'team_moving') return MOVING_WAIT_MS;
      // A line the plan refuses now (a key that changed hands since the request planned it): the pieces before
      // it are stored, the rest is not; sending the file again adds only what is missing.
      if (err instanceof AppError && err.status < 500)
        throw new JobFailure(
          err.code,
          `${err.message} (${c.next} of ${p.lines.length} records of this part were stored before it.)`,
        );
      throw err;
    }
    c.next += piece.length;
  }
  return null;
}
