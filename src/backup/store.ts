// The backups' layout in R2 (the BACKUPS bucket): one folder per team and backup,
// `backups/<team>/<stamp>/part-000001.ndjson …` (the team export's NDJSON, src/transfer/records.ts, cut into parts
// of about PART_BYTES at page boundaries) and `manifest.json`, written last: a folder without it is a backup that
// has not finished (or never will) and is neither listed as complete nor restored. Parts concatenated in order are
// the file `cairn export` writes.
import * as z from 'zod';
import { counted } from '../db/meter-bindings';
import type { CairnEnv } from '../env';

/** The BACKUPS bucket, each call a counted subrequest (src/db/meter.ts); undefined when none is bound. */
export const backupBucket = (env: Pick<CairnEnv, 'BACKUPS'>): R2Bucket | undefined =>
  env.BACKUPS && counted(env.BACKUPS, 'r2');

/** A part is cut after the page that passes this (a page is at most 500 rows, so a part stays a few MB at most). */
export const PART_BYTES = 1_000_000;
export const BACKUP_FORMAT = 'cairn-ndjson';

/** `2026-12-02T03-17-00Z`: a time as a folder name (sorts as time, no `:`). */
export const stampOf = (ms: number): string =>
  new Date(ms)
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/:/g, '-');
export const STAMP = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z$/;
/** The name rule of teams (src/lib/names.ts). */
const SLUG = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** A backup's name, as listed and as a restore names it: `<team>/<stamp>`. */
export const BackupName = z
  .string()
  .trim()
  .max(100)
  .refine((v) => {
    const [slug, stamp, ...rest] = v.split('/');
    return rest.length === 0 && SLUG.test(slug ?? '') && STAMP.test(stamp ?? '');
  }, 'a backup is named <team>/<stamp>, as `GET /api/admin/teams/<team>/backups` lists them');

export const folderOf = (name: string) => `backups/${name}/`;
export const partKey = (name: string, n: number) => `${folderOf(name)}part-${String(n).padStart(6, '0')}.ndjson`;
export const manifestKey = (name: string) => `${folderOf(name)}manifest.json`;

export const Manifest = z.object({
  format: z.literal(BACKUP_FORMAT),
  format_version: z.literal(1),
  team: z.string(),
  name: z.string(),
  started_at: z.number(),
  finished_at: z.number(),
  parts: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  records: z.record(z.string(), z.number().int().nonnegative()),
});
export type Manifest = z.infer<typeof Manifest>;

export async function readManifest(bucket: R2Bucket, name: string): Promise<Manifest | null> {
  const obj = await bucket.get(manifestKey(name));
  if (!obj) return null;
  const parsed = Manifest.safeParse(JSON.parse(await obj.text()));
  return parsed.success ? parsed.data : null;
}

export interface BackupEntry {
  name: string;
  /** Null: no manifest (still being written, or abandoned). */
  manifest: Manifest | null;
}

/** When a backup's stamp says it was started (ms), or NaN for a name that is not a stamp. */
export const stampTime = (name: string): number => {
  const stamp = name.slice(name.indexOf('/') + 1);
  return STAMP.test(stamp) ? Date.parse(stamp.replace(/T(\d{2})-(\d{2})-(\d{2})Z$/, 'T$1:$2:$3Z')) : Number.NaN;
};

/**
 * When the server started a backup: its manifest's `started_at` (written by the job, server time), else the time its
 * stamp names (also the server's since stamps are no longer chosen by a caller).
 */
export const startedAt = (e: BackupEntry): number => e.manifest?.started_at ?? stampTime(e.name);

/** Newest first by the time the server started them; names break ties. */
export const byStartedAt = (a: BackupEntry, b: BackupEntry): number =>
  startedAt(b) - startedAt(a) || (a.name < b.name ? 1 : a.name > b.name ? -1 : 0);

/** The team's backup folders, newest first (their manifests read: one request each, at most `limit`). */
export async function listBackups(bucket: R2Bucket, slug: string, limit = 100): Promise<BackupEntry[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix: `backups/${slug}/`, delimiter: '/', cursor, limit: 1000 });
    for (const p of page.delimitedPrefixes) {
      const stamp = p.slice(`backups/${slug}/`.length).replace(/\/$/, '');
      if (STAMP.test(stamp)) names.push(`${slug}/${stamp}`);
    }
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  names.sort().reverse();
  const out: BackupEntry[] = [];
  for (const name of names.slice(0, limit)) out.push({ name, manifest: await readManifest(bucket, name) });
  return out;
}

/** Deletes every object of a backup folder (a page of up to 1,000 keys a request). */
export async function deleteBackup(bucket: R2Bucket, name: string): Promise<void> {
  for (;;) {
    const page = await bucket.list({ prefix: folderOf(name), limit: 1000 });
    if (page.objects.length === 0) return;
    await bucket.delete(page.objects.map((o) => o.key));
    if (!page.truncated) return;
  }
}

/**
 * Which backups go when the team keeps `keep`: every complete one past the newest `keep` by the time the server
 * started it (its manifest's `started_at`, never its name: a name stamped in the future by an earlier version
 * would otherwise stay newest for good and push out every real backup), and every unfinished one started before
 * the newest complete one (a backup that stopped half way is never finished later: the next backup is a new
 * folder) or stamped after `now` (no backup this server starts is). Pure: the caller lists and deletes.
 */
export function backupsToPrune(entries: readonly BackupEntry[], keep: number, now: number): string[] {
  const sorted = [...entries].sort(byStartedAt);
  const newestComplete = sorted.find((e) => e.manifest !== null);
  let kept = 0;
  const gone: string[] = [];
  for (const e of sorted) {
    if (e.manifest !== null) {
      if (kept < keep) kept++;
      else gone.push(e.name);
    } else if (
      stampTime(e.name) > now ||
      (newestComplete !== undefined && stampTime(e.name) < startedAt(newestComplete))
    ) {
      gone.push(e.name);
    }
  }
  return gone;
}
