// What git tracks in a checkout, and git blob ids of tracked files computed in process. Of a repository the
// client reads only these: regular files (index mode 100644/100755) the index lists, read inside the checkout
// without following a link (read.ts), in a checkout that passed locate.ts and trust.ts.
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Io } from '../io';
import { configValues } from './config-file';
import { runGit } from './git';
import { isRefusal, locateRepo, readGitFile, type RepoInfo } from './locate';
import { regularFileUnder } from './read';
import { ownershipRefusal } from './trust';

/** A checkout the client may read and run (hardened) git in, or why not; null outside any repository. */
export function openRepo(cwd: string, env: Io['env']): { repo: RepoInfo } | { refused: string; root: string } | null {
  const found = locateRepo(cwd);
  if (found === null || isRefusal(found)) return found;
  const owner = ownershipRefusal(found, env);
  return owner ? { refused: owner, root: found.root } : { repo: found };
}

const LS_FILES_TIMEOUT_MS = 15_000;
const LS_FILES_MAX_BYTES = 64 * 1024 * 1024;

/** Per git folder: the regular files its index lists, kept while the index file is the same (a sender lives long). */
const memo = new Map<string, { stamp: string; files: string[]; set: Set<string> }>();

function indexStamp(repo: RepoInfo): string {
  try {
    const st = statSync(join(repo.gitDir, 'index'));
    return `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return 'none';
  }
}

/**
 * The regular files the index lists (no links, no submodules), `/`-separated and relative to the checkout, or
 * null when git cannot say (not installed, failing, too slow).
 */
export function trackedFiles(repo: RepoInfo, env: Io['env']): string[] | null {
  const stamp = indexStamp(repo);
  const kept = memo.get(repo.gitDir);
  if (kept && kept.stamp === stamp) return kept.files;
  const out = runGit(repo, {
    args: ['ls-files', '-s', '-z'],
    env,
    timeoutMs: LS_FILES_TIMEOUT_MS,
    maxBytes: LS_FILES_MAX_BYTES,
  });
  if (out === null) return null;
  const files: string[] = [];
  const set = new Set<string>();
  for (const rec of out.split('\0')) {
    // "<mode> <object> <stage>\t<path>"; a conflicted path is listed once per stage.
    const m = /^(100644|100755) [0-9a-f]+ \d\t(.+)$/s.exec(rec);
    if (m && !set.has(m[2]!)) {
      set.add(m[2]!);
      files.push(m[2]!);
    }
  }
  memo.set(repo.gitDir, { stamp, files, set });
  return files;
}

/** Whether the index lists `relPath` as a regular file (trackedFiles, looked up in its set). */
function isTracked(repo: RepoInfo, relPath: string, env: Io['env']): boolean {
  return trackedFiles(repo, env) !== null && memo.get(repo.gitDir)!.set.has(relPath);
}

/** The repository's object hash: SHA-256 when `extensions.objectFormat` says so, else SHA-1. */
export function objectFormat(repo: Pick<RepoInfo, 'real'>): 'sha1' | 'sha256' {
  const v = configValues(
    readGitFile(repo.real.commonDir, 'config', repo.real.commonDir) ?? '',
    'extensions',
    'objectFormat',
  ).pop();
  return v?.toLowerCase() === 'sha256' ? 'sha256' : 'sha1';
}

/** Larger files get no id (a cited file is source, not a data set). */
export const BLOB_MAX_BYTES = 64 * 1024 * 1024;
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;

/** A hash object; node:crypto is loaded here on use only, the one place the client loads it (build.test). */
export const newHash = (algorithm: 'sha1' | 'sha256') => process.getBuiltinModule('node:crypto').createHash(algorithm);

/**
 * The ids of a file's bytes, fed in chunks: git's blob id (hash of `blob <size>\0<bytes>`) and, when asked, the
 * whitespace-insensitive id of src/shared/evidence.ts (SHA-1 of the bytes without ASCII whitespace, 16 hex).
 */
export class FileHasher {
  readonly #blob: ReturnType<typeof newHash>;
  readonly #ws: ReturnType<typeof newHash> | null;
  constructor(size: number, algorithm: 'sha1' | 'sha256', ws: boolean) {
    this.#blob = newHash(algorithm).update(`blob ${size}\0`);
    this.#ws = ws ? newHash('sha1') : null;
  }
  update(chunk: Uint8Array): void {
    this.#blob.update(chunk);
    if (!this.#ws) return;
    const kept = Buffer.allocUnsafe(chunk.length);
    let n = 0;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (b !== 0x20 && (b < 0x09 || b > 0x0d)) kept[n++] = b;
    }
    this.#ws.update(kept.subarray(0, n));
  }
  digest(): { blob: string; ws: string | null } {
    return { blob: this.#blob.digest('hex'), ws: this.#ws ? this.#ws.digest('hex').slice(0, 16) : null };
  }
}

/** The ids of `bytes` (tests, benches): blob id and whitespace-insensitive id. */
export function idsOfBytes(bytes: Uint8Array, algorithm: 'sha1' | 'sha256' = 'sha1'): { blob: string; ws: string } {
  const h = new FileHasher(bytes.length, algorithm, true);
  h.update(bytes);
  const { blob, ws } = h.digest();
  return { blob, ws: ws! };
}

export interface FileRead {
  blob: string;
  /** With `ws`: the whitespace-insensitive id; else null. */
  ws: string | null;
  /** With `keep`: the bytes (evidence looks names up in them, on this machine); else null. */
  bytes: Buffer | null;
}

/**
 * The ids of the regular file `relPath` (`/`-separated) of the checkout `repo` as it is now, computed in process
 * from its bytes (SHA-1 or the repository's SHA-256: `git hash-object --no-filters`), tracked or not; null for
 * anything but a regular file reached without a link, larger than `maxBytes`, or changed while it was read. The
 * one reading of a file for its ids: blobIdOf (tracked files) and evidence (hooks-client/src/hook/evidence.ts).
 */
export function fileIdsUnder(
  repo: Pick<RepoInfo, 'root' | 'real'>,
  relPath: string,
  opts: { ws?: boolean; keep?: boolean; maxBytes?: number } = {},
): FileRead | null {
  const found = regularFileUnder(repo.root, relPath);
  if (!found || found.stat.size > (opts.maxBytes ?? BLOB_MAX_BYTES)) return null;
  let fd: number;
  try {
    fd = openSync(found.path, constants.O_RDONLY | NOFOLLOW | NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.ino !== found.stat.ino || st.dev !== found.stat.dev) return null;
    const hash = new FileHasher(st.size, objectFormat(repo), opts.ws === true);
    // Kept bytes are read whole (≤ maxBytes); otherwise in chunks of at most 1 MB.
    const buf = Buffer.allocUnsafe(opts.keep ? st.size || 1 : Math.min(st.size, 1024 * 1024) || 1);
    let done = 0;
    while (done < st.size) {
      const at = opts.keep ? done : 0;
      const n = readSync(fd, buf, at, Math.min(buf.length - at, st.size - done), done);
      if (n <= 0) return null;
      hash.update(buf.subarray(at, at + n));
      done += n;
    }
    // More bytes than stat said: the file grew while it was read.
    if (readSync(fd, Buffer.allocUnsafe(1), 0, 1, done) !== 0) return null;
    const { blob, ws } = hash.digest();
    return { blob, ws, bytes: opts.keep ? buf.subarray(0, st.size) : null };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * The git blob id of the tracked regular file `relPath` (`/`-separated) of the checkout at `root`, computed in
 * process from its bytes in the checkout: hash(`blob <size>\0<bytes>`), SHA-1 or the repository's SHA-256. That is
 * `git hash-object --no-filters` of the file, so it equals the committed blob's id unless a clean filter or an
 * end-of-line conversion applies. null for anything else: not a checkout root the client may read, not tracked,
 * not a regular file (a link, or under one), larger than BLOB_MAX_BYTES, or changed while it was read.
 */
export function blobIdOf(root: string, relPath: string, env: Io['env'] = process.env): string | null {
  const opened = openRepo(root, env);
  if (!opened || !('repo' in opened)) return null;
  const { repo } = opened;
  try {
    if (realpathSync(repo.root) !== realpathSync(root)) return null;
  } catch {
    return null;
  }
  if (!isTracked(repo, relPath, env)) return null;
  return fileIdsUnder(repo, relPath)?.blob ?? null;
}
