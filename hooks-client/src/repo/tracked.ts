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
function objectFormat(repo: RepoInfo): 'sha1' | 'sha256' {
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
  const found = regularFileUnder(repo.root, relPath);
  if (!found || found.stat.size > BLOB_MAX_BYTES) return null;
  let fd: number;
  try {
    fd = openSync(found.path, constants.O_RDONLY | NOFOLLOW | NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.ino !== found.stat.ino || st.dev !== found.stat.dev) return null;
    // node:crypto on use only: the hook path never loads it.
    const hash = process.getBuiltinModule('node:crypto').createHash(objectFormat(repo));
    hash.update(`blob ${st.size}\0`);
    const buf = Buffer.allocUnsafe(Math.min(st.size, 1024 * 1024) || 1);
    let done = 0;
    while (done < st.size) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, st.size - done), done);
      if (n <= 0) return null;
      hash.update(buf.subarray(0, n));
      done += n;
    }
    // More bytes than stat said: the file grew while it was read.
    if (readSync(fd, buf, 0, 1, done) !== 0) return null;
    return hash.digest('hex');
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
