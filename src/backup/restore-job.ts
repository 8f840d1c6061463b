// The `restore` job: a complete backup from the BACKUPS bucket into this team, verbatim (authors, private
// projects, times: the operator's restore importer, as a team move uses, src/transfer/import-plan.ts). Run in the
// team's lane, one bounded step at a time: a step reads the part it is in and imports its records in slices sized
// to the step's statement budget, each slice one batch (all or nothing); the cursor is the part and the records of
// it done. Import matches rows by key and content hash, so a slice run twice (a restart) adds nothing, and so does a
// second restore of the same backup. When the last part is in, the embed job gives the new rows their vectors.
import * as z from 'zod';
import { jobTeamWrite } from '../slots/enter-write';
import type { JobProgress } from '#shared/jobs';
import { JobFailure, type JobKind } from '../jobs/types';
import { importPart, MAX_IMPORT_LINES, numbered, type ImportCounts } from '../transfer/import';
import { noCounts } from '../transfer/import-plan';
import { ExportRecord } from '../transfer/records';
import { startEmbedJob } from '../vectors/embed-job';
import { BackupName, backupBucket, partKey, readManifest } from './store';

const RestoreParams = z.object({ backup: BackupName }).strict();
type RestoreParams = z.infer<typeof RestoreParams>;

interface RestoreCursor {
  /** The part being read (1-based) and the records of it already imported. */
  part: number;
  line: number;
  parts: number | null;
  records: number | null;
  done: number;
  imported: ImportCounts;
}

/** Statements a slice needs besides its batch: the plan's look-ups (projects, sessions, members, repeats, the history lines' sessions). */
const PLAN_STATEMENTS = 13;

const progress = (c: RestoreCursor): JobProgress => ({
  done: c.done,
  total: c.records,
  unit: 'records',
  phase: c.parts === null ? 'reading the manifest' : c.part > c.parts ? 'done' : `part ${c.part} of ${c.parts}`,
});

export const restoreJob: JobKind<RestoreParams, RestoreCursor> = {
  name: 'restore',
  lane: 'team',
  params: RestoreParams,
  // Only the operator (POST /api/admin/teams/:slug/restore): a restore writes rows as every author of the backup.
  adminStartable: false,
  dedupe: (p) => `restore:${p.backup}`,
  init: () => {
    const cursor: RestoreCursor = { part: 1, line: 0, parts: null, records: null, done: 0, imported: noCounts() };
    return { cursor, progress: progress(cursor) };
  },
  async step(ctx, params, start) {
    if (ctx.teamId === null) throw new JobFailure('team_required', 'A restore runs for one team.');
    const bucket = backupBucket(ctx.env);
    if (!bucket) throw new JobFailure('backups_off', 'No R2 bucket is bound as BACKUPS on this server.');
    // Through the team's write gate: while the team moves, the restore waits (it would write on the database
    // the team is leaving, behind the move's copy).
    const pass = await jobTeamWrite(ctx.env, ctx.teamId, ctx.now);
    if ('waitMs' in pass) return { cursor: start, done: false, progress: progress(start), waitMs: pass.waitMs };
    const c: RestoreCursor = { ...start, imported: { ...start.imported } };
    if (c.parts === null) {
      const m = await readManifest(bucket, params.backup);
      if (!m)
        throw new JobFailure(
          'backup_not_found',
          `No complete backup "${params.backup}" (a backup without its manifest.json did not finish).`,
        );
      c.parts = m.parts;
      c.records = Object.values(m.records).reduce((a, n) => a + n, 0);
    }
    const h = pass.dbs;
    // Two statements a record at most (a row and its file rows), within the step's budget.
    const slice = Math.max(1, Math.min(MAX_IMPORT_LINES, Math.floor((ctx.budget.statements - PLAN_STATEMENTS) / 2)));
    while (c.part <= c.parts) {
      if (!ctx.fits({ statements: 2 * slice + PLAN_STATEMENTS, subrequests: 1 }))
        return { cursor: c, done: false, progress: progress(c) };
      const obj = await bucket.get(partKey(params.backup, c.part));
      if (!obj)
        throw new JobFailure('backup_incomplete', `Part ${c.part} of "${params.backup}" is missing from the bucket.`);
      const text = await obj.text();
      ctx.holding(text.length * 2);
      const records = parsePart(text, () => `part ${c.part} of "${params.backup}"`);
      let first = true;
      while (c.line < records.length) {
        if (!first && !ctx.fits({ statements: 2 * slice + PLAN_STATEMENTS }))
          return { cursor: c, done: false, progress: progress(c) };
        first = false;
        const part = records.slice(c.line, c.line + slice);
        const r = await importPart(h, { kind: 'restore' }, numbered(part), ctx.now);
        for (const k of Object.keys(c.imported) as (keyof ImportCounts)[]) c.imported[k] += r.counts[k];
        c.line += part.length;
        c.done += part.length;
      }
      c.part++;
      c.line = 0;
    }
    const embed = await startEmbedJob(ctx.env, ctx.teamId);
    return {
      cursor: c,
      done: true,
      progress: progress(c),
      result: { backup: params.backup, records: c.done, imported: { ...c.imported }, embed_job: embed },
    };
  },
};

/** A part's records; a line that is not a cairn record fails the job (retrying cannot fix a file). */
function parsePart(text: string, where: () => string): ExportRecord[] {
  const out: ExportRecord[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      raw = null;
    }
    const r = ExportRecord.safeParse(raw);
    if (!r.success) throw new JobFailure('backup_invalid', `Line ${i + 1} of ${where()} is not a cairn record.`);
    out.push(r.data);
  }
  return out;
}
