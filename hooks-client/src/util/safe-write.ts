// Every file the client writes on a user's machine outside its own spool (agent configurations, their backups,
// the install record, the state folder) goes through here. A cloned repository or another program can put a
// symbolic link where cairn expects a file (`.claude/settings.local.json.cairn-backup → ~/.bashrc`): a plain
// writeFileSync follows it and replaces the link's target. So: no link is followed (lstat on every part below
// the folder the file belongs in, O_NOFOLLOW on open), nothing is written outside that folder, a file is
// replaced through a temporary file and a rename in its own folder (the rename replaces a name, never writes
// through one), an existing file keeps its mode (0600 stays 0600), and what cairn creates is owner-only.
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  chmodSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** Mode of a file cairn creates (configs it makes, backups, state). */
export const PRIVATE_FILE = 0o600;
/** Mode of a folder cairn creates. */
export const PRIVATE_DIR = 0o700;

/** A write (or read) refused because a path is a link, not a plain file, or outside its folder. */
export class UnsafePathError extends Error {
  readonly code = 'unsafe_path';
  constructor(
    readonly path: string,
    why: string,
  ) {
    super(
      `${path} ${why}; cairn does not write through links or outside the folder it belongs in. Move it aside and run the command again.`,
    );
    this.name = 'UnsafePathError';
  }
}

export interface SafeOptions {
  /** The folder the file must be inside (default: the file's own folder). No part below it may be a link. */
  root?: string;
  /** Mode of a file that does not exist yet (an existing one keeps its own unless `exactMode`). */
  mode?: number;
  /** Give the file `mode` even when it exists (backups: always owner-only). */
  exactMode?: boolean;
  /** Mode of folders created on the way. */
  dirMode?: number;
}

// O_NOFOLLOW is not defined on Windows, where the lstat checks below carry the rule alone.
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/**
 * The folders from `root` (exclusive) down to the file's folder, after checking the file is inside `root`.
 * Throws UnsafePathError when it is not.
 */
function foldersBelow(path: string, root: string): { abs: string; folders: string[] } {
  const abs = resolve(path);
  const top = resolve(root);
  const rel = relative(top, abs);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) throw new UnsafePathError(abs, `is outside ${top}`);
  const parts = rel.split(sep).slice(0, -1);
  const folders: string[] = [];
  let at = top;
  for (const p of parts) {
    at = join(at, p);
    folders.push(at);
  }
  return { abs, folders };
}

/** Checks every existing part below `root` is a real folder and the file itself no link; answers the file's stats. */
function checked(path: string, opts: SafeOptions, create: boolean): { abs: string; st: Stats | null } {
  const root = opts.root ?? dirname(resolve(path));
  const { abs, folders } = foldersBelow(path, root);
  // The root is trusted as it is (a user's own linked ~/.config stays theirs); only what is below it is checked.
  if (create && lstatOrNull(root) === null) mkdirSync(root, { recursive: true, mode: opts.dirMode ?? PRIVATE_DIR });
  for (const f of folders) {
    const st = lstatOrNull(f);
    if (st === null) {
      if (!create) return { abs, st: null };
      mkdirSync(f, { mode: opts.dirMode ?? PRIVATE_DIR });
      continue;
    }
    if (st.isSymbolicLink()) throw new UnsafePathError(f, 'is a symbolic link');
    if (!st.isDirectory()) throw new UnsafePathError(f, 'is not a folder');
  }
  const st = lstatOrNull(abs);
  if (st?.isSymbolicLink()) throw new UnsafePathError(abs, 'is a symbolic link');
  if (st && !st.isFile()) throw new UnsafePathError(abs, 'is not a regular file');
  return { abs, st };
}

/**
 * Replaces (or creates) `path` with `data`: a temporary file in the same folder, opened O_EXCL|O_NOFOLLOW with
 * the file's mode, then renamed over it. Refuses a link at the path or anywhere below `root`.
 */
export function safeWriteFile(path: string, data: string | Uint8Array, opts: SafeOptions = {}): void {
  const { abs, st } = checked(path, opts, true);
  const mode = st && !opts.exactMode ? st.mode & 0o7777 : (opts.mode ?? PRIVATE_FILE);
  const tmp = join(dirname(abs), `.${basename(abs)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, mode);
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
    // The umask may have narrowed the mode open was given: the file gets exactly the one it had.
    if ((fstatSync(fd).mode & 0o7777) !== mode) fchmodSync(fd, mode);
    closeSync(fd);
  } catch (e) {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
    unlinkSync(tmp);
    throw e;
  }
  try {
    renameSync(tmp, abs);
  } catch (e) {
    unlinkSync(tmp);
    throw e;
  }
}

/** The text of `path`, or null when there is none; a link there (or below `root`) is refused, never read through. */
export function safeReadFile(path: string, opts: SafeOptions = {}): string | null {
  const { abs, st } = checked(path, opts, false);
  if (!st) return null;
  const fd = openSync(abs, constants.O_RDONLY | NOFOLLOW);
  try {
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/** Removes `path` when it is a plain file inside `root`; a link there is refused (it is not cairn's). */
export function safeUnlink(path: string, opts: SafeOptions = {}): void {
  const { abs, st } = checked(path, opts, false);
  if (st) unlinkSync(abs);
}

/**
 * Makes sure `dir` is a folder of cairn's own, owner-only: created (with its missing parents) 0700, an existing
 * one narrowed to 0700 when it is looser (earlier versions made it 0755), never a link.
 */
export function ensurePrivateDir(dir: string): void {
  const abs = resolve(dir);
  const st = lstatOrNull(abs);
  if (st === null) {
    mkdirSync(abs, { recursive: true, mode: PRIVATE_DIR });
    // recursive mkdir applies the mode before the umask: the leaf gets exactly 0700.
    chmodSync(abs, PRIVATE_DIR);
    return;
  }
  if (st.isSymbolicLink()) throw new UnsafePathError(abs, 'is a symbolic link');
  if (!st.isDirectory()) throw new UnsafePathError(abs, 'is not a folder');
  if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) chmodSync(abs, st.mode & 0o700);
}
