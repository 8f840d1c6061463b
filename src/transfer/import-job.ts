// The `import` job: what is left of one part of an admin's NDJSON import (POST /api/admin/import) after the
// request wrote what its invocation's budget allowed (src/transfer/import-write.ts: on Workers Paid the whole part,
// and no job is started). The request parses every line and plans the whole part by reads alone (a refused line is
// a 4xx at once, nothing stored), writes pieces, and starts this job with the part and the line to go on from. A
// step writes pieces while they fit its statement budget (each planned again and written in one batch,
// src/transfer/import.ts). A piece written again after a restart adds nothing (rows are matched by key and content
// hash) and counts what the first run added (its audit row), so a restart between steps loses and repeats nothing.
// A part is stored piece by piece, not all or nothing: a job that fails after its first piece keeps the pieces
// before (it says how many records), and sending the part again adds the rest. The job does not embed: when the
// part is written it queues the team's `embed` job, which starts once the import's parts stop coming.
import * as z from 'zod';
import { JobFailure, type JobKind, type StepContext } from '../jobs/types';
import { AppError } from '../lib/errors';
import type { JobProgress } from '#shared/jobs';
import { MAX_IMPORT_LINES } from './import';
import { noCounts, type ImportCounts } from './import-plan';
import { embedLater, pieceCost, pieceSize, writePieces, type Written } from './import-write';
import { ExportRecord } from './records';

/** How long a step waits for a team move to end before it asks the gate again. */
const MOVING_WAIT_MS = 5_000;

const Counts = z
  .object({
    users: z.number().int().min(0),
    projects: z.number().int().min(0),
    sessions: z.number().int().min(0),
    prompts: z.number().int().min(0),
    observations: z.number().int().min(0),
    summaries: z.number().int().min(0),
  })
  .strict();

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
    /** Lines the request already wrote (the job goes on from here), and what they added. */
    from: z.number().int().min(0).optional(),
    counts: Counts.optional(),
  })
  .strict();
type Params = z.infer<typeof Params>;

interface Cursor {
  /** Lines written so far (the next piece starts here). */
  next: number;
  counts: ImportCounts;
  /** Set in jobs queued before imports stopped embedding: such a job ends at its next step (the embed job follows). */
  embed?: unknown;
  /** When the job began: its pieces' audit rows are no older (absent in jobs queued before it was kept). */
  since?: number;
}

const progress = (p: Params, c: Cursor): JobProgress => ({
  done: c.next,
  total: p.lines.length,
  unit: 'records',
  phase: c.next < p.lines.length ? 'writing records' : 'done',
});

// What the part added, as the request answers it when it writes the part itself.
const result = (p: Params, c: Cursor) => ({ records: p.lines.length, imported: { ...c.counts } });

export const importJob: JobKind<Params, Cursor> = {
  name: 'import',
  lane: 'team',
  params: Params,
  init: (p, { now }) => {
    const cursor: Cursor = {
      next: Math.min(p.from ?? 0, p.lines.length),
      counts: { ...noCounts(), ...p.counts },
      since: now,
    };
    return { cursor, progress: progress(p, cursor) };
  },
  async step(ctx, p, start) {
    if (ctx.teamId === null || ctx.teamId !== p.caller.teamId)
      throw new JobFailure('team_required', "An import runs in the importing team's lane.");
    const c: Cursor = { next: start.next, counts: { ...start.counts }, since: start.since };
    if (start.embed === undefined || start.embed === null) {
      const waited = await writeStep(ctx, p, c);
      if (waited !== null)
        return {
          cursor: c,
          done: false,
          progress: { ...progress(p, c), phase: 'waiting for the team move to end' },
          waitMs: waited,
        };
      if (c.next < p.lines.length) return { cursor: c, done: false, progress: progress(p, c), result: result(p, c) };
    }
    await embedLater(ctx.env, ctx.teamId, c.counts, Date.now());
    return { cursor: c, done: true, progress: progress(p, { ...c, next: p.lines.length }), result: result(p, c) };
  },
};

/** Writes pieces while they fit the step; answers ms to wait when the team is moving, else null. */
async function writeStep(ctx: StepContext, p: Params, c: Cursor): Promise<number | null> {
  const size = pieceSize(ctx.budget.statements);
  const at: Written = c;
  try {
    const moving = await writePieces(
      {
        env: ctx.env,
        caller: p.caller,
        lines: p.lines,
        now: ctx.now,
        nextSize: () => (ctx.fits({ statements: pieceCost(size), subrequests: 1 }) ? size : 0),
        earlier: { target: (next) => `import:${ctx.jobId}:${next}`, since: c.since ?? 0 },
        between: () => ctx.breathe(),
      },
      at,
    );
    return moving === 'moving' ? MOVING_WAIT_MS : null;
  } catch (err) {
    if (err instanceof AppError && err.status < 500) throw new JobFailure(err.code, err.message);
    throw err;
  }
}
