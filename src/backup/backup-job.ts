// The `backup` job: the team's whole memory (every project, private ones too, and every author: it is the
// operator's copy in the operator's own account) as the export's NDJSON into the BACKUPS bucket, one part a step.
// A step reads export pages (src/transfer/export-cursor.ts, three statements each) until the part passes PART_BYTES
// or the step's budget is spent, writes the part, and saves the cursor. A step run again after a restart writes
// the same part key again from the same cursor. The last step writes the manifest (which makes the backup
// complete) and deletes what the team keeps no more (BACKUP_KEEP complete backups). Started by the daily cron for
// every team when the bucket is bound (src/maintenance/daily.ts), or by an admin (POST /api/admin/jobs) or the
// operator (POST /api/admin/teams/:slug/backups).
import * as z from 'zod';
import { configOf } from '../config';
import { directoryDb, teamDb } from '../db/shards';
import { teamInfo } from '../db/teams';
import type { JobProgress } from '#shared/jobs';
import { JobFailure, type JobKind } from '../jobs/types';
import { exportPager, exportStart, type ExportCursor } from '../transfer/export-cursor';
import {
  backupsToPrune,
  BACKUP_FORMAT,
  backupBucket,
  deleteBackup,
  listBackups,
  manifestKey,
  PART_BYTES,
  partKey,
  stampOf,
  readManifest,
  type Manifest,
} from './store';

// No stamp: a backup is named by the server's time when it was queued (the daily cron's scheduled time). A stamp an
// admin could choose (one in the future) sorted past every real backup and made pruning delete those.
const BackupParams = z
  .object({
    /** Bytes a part is cut after (default PART_BYTES); smaller parts make more, smaller steps. */
    partBytes: z.number().int().min(1_000).max(16_000_000).optional(),
  })
  .strict();
type BackupParams = z.infer<typeof BackupParams>;

interface BackupCursor {
  stamp: string;
  startedAt: number;
  export: ExportCursor;
  /** Parts written so far. */
  parts: number;
  bytes: number;
  records: Record<string, number>;
}

const total = (r: Record<string, number>) => Object.values(r).reduce((a, n) => a + n, 0);
const progress = (c: BackupCursor, phase: string): JobProgress => ({
  done: total(c.records),
  total: null,
  unit: 'records',
  phase,
});

/** Statements one export page costs at most (the page, its session keys, a project row, an observation page's evidence ids). */
const PAGE_STATEMENTS = 4;

export const backupJob: JobKind<BackupParams, BackupCursor> = {
  name: 'backup',
  lane: 'team',
  params: BackupParams,
  adminStartable: true,
  // One backup of a team at a time; the cron's next day is a new one.
  dedupe: () => 'backup',
  init: (params, { now }) => {
    const cursor: BackupCursor = {
      stamp: stampOf(now),
      startedAt: now,
      export: exportStart(),
      parts: 0,
      bytes: 0,
      records: {},
    };
    return { cursor, progress: progress(cursor, 'waiting') };
  },
  async step(ctx, params, start) {
    if (ctx.teamId === null) throw new JobFailure('team_required', 'A backup runs for one team.');
    const bucket = backupBucket(ctx.env);
    if (!bucket)
      throw new JobFailure(
        'backups_off',
        'No R2 bucket is bound as BACKUPS (README "Your data" says how to bind one).',
      );
    const team = await teamInfo(directoryDb(ctx.env), ctx.teamId);
    if (!team) throw new JobFailure('team_gone', 'The team no longer exists.');
    const name = `${team.slug}/${start.stamp}`;
    const c: BackupCursor = { ...start, records: { ...start.records } };
    if (c.parts === 0) {
      // Two backups queued in the same second would share a folder: the second would overwrite the first's parts.
      // A manifest there that is not this job's own (a step run again after its manifest landed) is another backup.
      const there = await readManifest(bucket, name);
      if (there && there.started_at !== c.startedAt)
        throw new JobFailure('backup_exists', `A backup named ${name} exists; start another in a second.`);
    }
    if (c.export.at !== 'done') {
      const pager = await exportPager(await teamDb(ctx.env, ctx.teamId), ctx.teamId, () => true);
      const lines: string[] = [];
      let bytes = 0;
      let cursor: ExportCursor = c.export;
      const counts: Record<string, number> = {};
      const limit = params.partBytes ?? PART_BYTES;
      while (cursor.at !== 'done' && bytes < limit && ctx.fits({ statements: PAGE_STATEMENTS })) {
        const page = await pager.page(cursor);
        let next = page.next;
        // The part ends at the first record past the limit that the page can be cut after.
        for (const [i, r] of page.records.entries()) {
          const line = `${JSON.stringify(r)}\n`;
          lines.push(line);
          bytes += line.length;
          counts[r.kind] = (counts[r.kind] ?? 0) + 1;
          const resume = page.resume[i];
          if (bytes >= limit && resume) {
            next = resume;
            break;
          }
        }
        cursor = next;
      }
      if (lines.length) {
        const body = new TextEncoder().encode(lines.join(''));
        ctx.holding(bytes * 2 + body.byteLength);
        await bucket.put(partKey(name, c.parts + 1), body, {
          httpMetadata: { contentType: 'application/x-ndjson; charset=utf-8' },
        });
        c.parts++;
        c.bytes += body.byteLength;
        for (const [k, n] of Object.entries(counts)) c.records[k] = (c.records[k] ?? 0) + n;
      }
      c.export = cursor;
      if (cursor.at !== 'done') return { cursor: c, done: false, progress: progress(c, `writing part ${c.parts + 1}`) };
    }
    const manifest: Manifest = {
      format: BACKUP_FORMAT,
      format_version: 1,
      team: team.slug,
      name,
      started_at: c.startedAt,
      finished_at: Date.now(),
      parts: c.parts,
      bytes: c.bytes,
      records: c.records,
    };
    await bucket.put(manifestKey(name), JSON.stringify(manifest), {
      httpMetadata: { contentType: 'application/json' },
    });
    const keep = configOf(ctx.env).backups.keep;
    const pruned = backupsToPrune(await listBackups(bucket, team.slug, 1000), keep, Date.now());
    for (const gone of pruned) await deleteBackup(bucket, gone);
    return {
      cursor: c,
      done: true,
      progress: progress(c, 'done'),
      result: { backup: name, parts: c.parts, bytes: c.bytes, records: c.records, pruned },
    };
  },
};
