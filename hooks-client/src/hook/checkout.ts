// The checkout report of SessionStart (issue 34; docs/architecture.md, "Evidence"): the state of the files and
// branches the server asked about last time (its watch), as entries keyed by hashes, sent whole the first time,
// then as changes against what the server acknowledged, then as a bare digest while nothing changed. Files whose
// size, mtime and inode did not change since they were last read are not read again. Kept per checkout in the
// state folder (owner-only), never sent anywhere else.
import { captureHeard, noteServerMode } from '../status/capture';
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { branchKey, canonicalEntries, evidenceKey, fileEntry, fileKey } from '#shared/evidence';
import type { GitView } from '#shared/git';
import type { WireCheckoutReport, WireContextAnswer, WireContextRequest, WireWatch } from '#shared/wire/checkout';
import { call } from '../net/http';
import type { HookContext } from './context';
import { localTimeZone } from './recall';
import { branchesPresent } from '../project/git-head';
import { readFileIds } from './evidence';
import type { RepoInfo } from '../repo/locate';
import { newHash } from '../repo/tracked';
import { ensurePrivateDir, safeWriteFile } from '../util/safe-write';

type Entries = Record<string, string>;

/** Caches whose file memory changed since they were read (written back only then). */
const dirty = new WeakSet<CheckoutCache>();

/** A file's entry as last computed, and what it was computed from. */
interface Seen {
  size: number;
  mtimeMs: number;
  ino: number;
  /** evidenceKey of the names it was checked for. */
  names: string;
  entry: string;
}

export interface CheckoutCache {
  watch: WireWatch;
  /** The server's digest of `watch` (sent back so an unchanged watch is not sent again). */
  watchDigest: string | null;
  /** The state the server last acknowledged (its digest equals the answer's). */
  acked: { digest: string; entries: Entries } | null;
  files: Record<string, Seen>;
  /** Branches of the watch this checkout had when last looked at: absent now means deleted (`d`). */
  branches: string[];
}

const EMPTY: CheckoutCache = {
  watch: { files: [], branches: [] },
  watchDigest: null,
  acked: null,
  files: {},
  branches: [],
};

const cacheFile = (stateDir: string, root: string) =>
  join(stateDir, 'checkouts', `${newHash('sha256').update(root).digest('hex').slice(0, 24)}.json`);

export function readCheckoutCache(stateDir: string, root: string): CheckoutCache {
  try {
    const raw = JSON.parse(readFileSync(cacheFile(stateDir, root), 'utf8')) as Partial<CheckoutCache>;
    return {
      watch: raw.watch && Array.isArray(raw.watch.files) ? raw.watch : EMPTY.watch,
      watchDigest: typeof raw.watchDigest === 'string' ? raw.watchDigest : null,
      acked: raw.acked ?? null,
      files: raw.files ?? {},
      branches: Array.isArray(raw.branches) ? raw.branches : [],
    };
  } catch {
    return { ...EMPTY, files: {} };
  }
}

export function writeCheckoutCache(stateDir: string, root: string, cache: CheckoutCache): void {
  try {
    const file = cacheFile(stateDir, root);
    ensurePrivateDir(join(stateDir, 'checkouts'));
    safeWriteFile(file, JSON.stringify(cache));
  } catch {
    // the next SessionStart reports whole
  }
}

/** What the file's entry is now; reads it only when its size, mtime or inode moved (or its names changed). */
function fileState(repo: RepoInfo, path: string, names: readonly string[], cache: CheckoutCache): string | undefined {
  const sig = evidenceKey(names.join('\n'));
  let st: { size: number; mtimeMs: number; ino: number } | null = null;
  try {
    const s = lstatSync(join(repo.root, ...path.split('/')));
    st = { size: s.size, mtimeMs: s.mtimeMs, ino: s.ino };
  } catch {
    // absent: readFileIds says so
  }
  const seen = cache.files[path];
  if (st && seen && seen.size === st.size && seen.mtimeMs === st.mtimeMs && seen.ino === st.ino && seen.names === sig)
    return seen.entry;
  const read = readFileIds(repo, path, names.length > 0);
  if (read === undefined) return undefined;
  const entry =
    read === null
      ? '-'
      : fileEntry({
          blob: read.blob,
          ws: read.ws,
          missing: names.filter((n) => !read.bytes!.includes(n)).map(evidenceKey),
        });
  if (st && read) cache.files[path] = { ...st, names: sig, entry };
  else delete cache.files[path];
  dirty.add(cache);
  return entry;
}

/** The entries of the watch as the checkout is now (updates the cache's file and branch memory). */
export function checkoutEntries(repo: RepoInfo, watch: WireWatch, cache: CheckoutCache): Entries {
  const entries: Entries = {};
  const watched = new Set<string>();
  for (const f of watch.files) {
    watched.add(f.path);
    const entry = fileState(repo, f.path, f.names, cache);
    if (entry !== undefined) entries[fileKey(f.path)] = entry;
  }
  for (const path of Object.keys(cache.files)) if (!watched.has(path)) delete cache.files[path];
  const present = branchesPresent(repo, watch.branches);
  const had = new Set(cache.branches);
  for (const b of watch.branches) entries[branchKey(b)] = present.has(b) ? '1' : had.has(b) ? 'd' : '0';
  cache.branches = watch.branches.filter((b) => present.has(b) || had.has(b));
  return entries;
}

export const digestOf = (entries: Entries): string => newHash('sha256').update(canonicalEntries(entries)).digest('hex');

/** The report for `entries`: a bare digest when the server has it, else the changes since, else the whole state. */
export function reportFor(entries: Entries, acked: CheckoutCache['acked'], whole = false): WireCheckoutReport {
  const digest = digestOf(entries);
  if (!whole && acked?.digest === digest) return { digest };
  if (whole || !acked) return { digest, set: entries };
  const set: Entries = {};
  for (const [k, v] of Object.entries(entries)) if (acked.entries[k] !== v) set[k] = v;
  const drop = Object.keys(acked.entries).filter((k) => !(k in entries));
  return { digest, base: acked.digest, set, ...(drop.length ? { drop } : {}) };
}

/** Time a second context request needs at least (else the first answer is used). */
const RETRY_MIN_MS = 600;

/**
 * The index through POST /api/context with the checkout report, asked once more when the server wants the whole
 * state or names files or branches it was not told about (while time is left; the first answer is an index all the
 * same). Null when the server does not answer the route (an older server: the caller asks GET /api/context).
 */
export async function contextWithReport(
  ctx: HookContext,
  repo: RepoInfo,
  git: GitView | null,
  timeoutMs: number,
  /** The agent's session the index goes into (its receipts), or null. */
  session: string | null = null,
): Promise<string | null> {
  const until = ctx.io.now() + timeoutMs;
  const cache = readCheckoutCache(ctx.paths.stateDir, repo.root);
  const before = JSON.stringify([cache.acked?.digest, cache.watchDigest, cache.branches]);
  let whole = false;
  for (let attempt = 0; attempt < 2; attempt++) {
    const entries = checkoutEntries(repo, cache.watch, cache);
    const checkout = {
      ...reportFor(entries, cache.acked, whole),
      ...(cache.watchDigest ? { watch: cache.watchDigest } : {}),
    };
    const body: WireContextRequest = {
      project: ctx.project,
      tz: localTimeZone(),
      git,
      checkout,
      ...(session ? { session } : {}),
    };
    const answer = await postContext(ctx, body, until - ctx.io.now());
    if (!answer) return attempt ? '' : null;
    cache.acked = answer.checkout.digest === checkout.digest ? { digest: checkout.digest, entries } : null;
    const changed = answer.watch !== null && answer.watch_digest !== cache.watchDigest;
    if (answer.watch) {
      cache.watch = answer.watch;
      cache.watchDigest = answer.watch_digest;
    }
    const again = answer.checkout.need || (answer.checkout.unreported > 0 && changed);
    if (attempt === 0 && again && until - ctx.io.now() > RETRY_MIN_MS) {
      whole = answer.checkout.need;
      continue;
    }
    // Written only when something changed: most sessions start on a state already reported.
    if (dirty.has(cache) || JSON.stringify([cache.acked?.digest, cache.watchDigest, cache.branches]) !== before)
      writeCheckoutCache(ctx.paths.stateDir, repo.root, cache);
    return answer.text;
  }
  return '';
}

async function postContext(
  ctx: HookContext,
  body: WireContextRequest,
  timeoutMs: number,
): Promise<WireContextAnswer | null> {
  const { url, token, device } = ctx.delivery;
  if (!url || !token) return null;
  try {
    const r = await call(url, '/api/context', { method: 'POST', body, token, device, timeoutMs, maxBytes: 400_000 });
    if (r.status !== 200) return null;
    noteServerMode(ctx.paths.stateDir, ctx.projectRoot, captureHeard(r.headers), ctx.io.now());
    const a = JSON.parse(r.text) as WireContextAnswer;
    const watchOk = a.watch === null || (typeof a.watch === 'object' && Array.isArray(a.watch.files));
    return typeof a.text === 'string' && a.checkout && watchOk && typeof a.watch_digest === 'string' ? a : null;
  } catch {
    return null;
  }
}
