// Reading a file of a checkout the way the client may: a regular file inside the checkout, reached without
// following a link. A repository is someone else's content: a committed `README.md -> ~/.ssh/config`, or a
// tracked `docs/x.md` whose `docs/` in the checkout is a link to another folder, would otherwise put the
// user's private files into team memory (issue 37).
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, realpathSync, type Stats } from 'node:fs';
import { join } from 'node:path';

/** Not on Windows; there the per-component lstat below is the only guard. */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
/** A FIFO a repository placed at a tracked path must not block the open. */
const NONBLOCK = constants.O_NONBLOCK ?? 0;

/** `rel`'s segments when it is a plain relative path (git's form: `/`-separated, no `.` or `..`), else null. */
export function pathSegments(rel: string): string[] | null {
  if (!rel || rel.includes('\0') || rel.includes('\\') || rel.startsWith('/')) return null;
  const parts = rel.split('/');
  return parts.every((p) => p !== '' && p !== '.' && p !== '..') ? parts : null;
}

/**
 * The regular file at `root/rel`, as lstat sees it, when every folder on the way is a real folder (no link) and
 * the file itself is a regular file (not a link, FIFO, device or folder); else null. The root itself is taken
 * by its real path (`realRoot` when the caller has it already): the user chose it, links above it are theirs.
 */
export function regularFileUnder(root: string, rel: string, realRoot?: string): { path: string; stat: Stats } | null {
  const parts = pathSegments(rel);
  if (!parts) return null;
  let path: string;
  try {
    path = realRoot ?? realpathSync.native(root);
  } catch {
    return null;
  }
  for (let i = 0; i < parts.length; i++) {
    path = join(path, parts[i]!);
    let st: Stats;
    try {
      st = lstatSync(path);
    } catch {
      return null;
    }
    const last = i === parts.length - 1;
    if (last ? !st.isFile() : !st.isDirectory()) return null;
    if (last) return { path, stat: st };
  }
  return null;
}

/**
 * At most `max` bytes of the regular file `root/rel` (see regularFileUnder), or null. Opened without following a
 * final link and checked to be the very file lstat saw, so a swap between the check and the open reads nothing.
 */
export function readRegularFile(root: string, rel: string, max: number, realRoot?: string): Buffer | null {
  const found = regularFileUnder(root, rel, realRoot);
  if (!found) return null;
  let fd: number;
  try {
    fd = openSync(found.path, constants.O_RDONLY | NOFOLLOW | NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.ino !== found.stat.ino || st.dev !== found.stat.dev) return null;
    const buf = Buffer.alloc(Math.min(max, st.size));
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, n);
      if (got <= 0) break;
      n += got;
    }
    return buf.subarray(0, n);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
