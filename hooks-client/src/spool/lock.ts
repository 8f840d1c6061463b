// A lock file (O_EXCL create) shared by concurrent hook processes; a holder that died is detected and replaced.
import { openSync, closeSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { killPoint } from '../util/kill-point';

const STALE_MS = 30_000;
/** A holder writes its pid right after creating the file; one still empty after this long died in between. */
const EMPTY_STALE_MS = 1_000;
const sleeper = new Int32Array(new SharedArrayBuffer(4));
const sleep = (ms: number) => Atomics.wait(sleeper, 0, 0, ms);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isStale(path: string, now: number): string | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  const [pid, at] = text.split(' ').map(Number);
  // An empty (or torn) file is a holder caught between create and write, or killed there: stale once old.
  if (!pid || !at) return olderThan(path, now, EMPTY_STALE_MS) ? text : null;
  return now - at > STALE_MS || !alive(pid) ? text : null;
}

function olderThan(path: string, now: number, ms: number): boolean {
  try {
    return now - statSync(path).mtimeMs > ms;
  } catch {
    return false;
  }
}

/**
 * Takes the lock, waiting up to `waitMs`; returns its release function, or null when it stayed busy.
 * Holders keep it for a few milliseconds (append) or for one replay; a crashed holder's lock is broken.
 */
export function acquireLock(path: string, waitMs: number): (() => void) | null {
  const start = Date.now();
  let delay = 1;
  for (;;) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      killPoint('lock-created');
      writeSync(fd, `${process.pid} ${Date.now()}`);
      closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        try {
          unlinkSync(path);
        } catch {
          // already broken as stale by someone else
        }
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const staleText = isStale(path, Date.now());
    if (staleText !== null) {
      // Rename (atomic) rather than unlink, and only if it still holds what we judged stale.
      const aside = `${path}.stale-${process.pid}`;
      try {
        renameSync(path, aside);
        if (readFileSync(aside, 'utf8') !== staleText) renameSync(aside, path);
        else unlinkSync(aside);
      } catch {
        // someone else broke it first
      }
      continue;
    }
    if (Date.now() - start >= waitMs) return null;
    sleep(delay);
    delay = Math.min(delay * 2, 20);
  }
}
