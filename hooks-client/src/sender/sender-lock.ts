// The sender's lock file (`sender.lock` in the state dir: "<pid> <ms>"): at most one sender per machine. The
// sender rewrites it every few seconds, so a quick hook can tell one is running from a single stat (mtime),
// and a sender that stopped (killed, machine asleep) is replaced once its lock is stale.
import { mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SENDER_LOCK, SENDER_STALE_MS } from '../inbox/entry';
import { acquireLock } from '../spool/lock';

export interface SenderLock {
  /** Rewrites the lock; false when it is no longer ours (another sender took over a stale one). */
  beat(): boolean;
  /** Removes the lock if it is still ours. */
  release(): void;
}

const lockPath = (stateDir: string) => join(stateDir, SENDER_LOCK);
const ours = (path: string) => {
  try {
    return Number(readFileSync(path, 'utf8').split(' ')[0]) === process.pid;
  } catch {
    return false;
  }
};

export function takeSenderLock(stateDir: string): SenderLock | null {
  const path = lockPath(stateDir);
  // `cairn sender` run by hand on a machine with no state yet: the folder first, else the lock cannot be made.
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  // The spool's lock file logic: O_EXCL create, a dead or silent (30 s) holder's lock broken.
  if (!acquireLock(path, 0)) return null;
  return {
    beat() {
      if (!ours(path)) return false;
      try {
        const tmp = `${path}.${process.pid}.tmp`;
        writeFileSync(tmp, `${process.pid} ${Date.now()}`, { mode: 0o600 });
        renameSync(tmp, path);
        return true;
      } catch {
        return false;
      }
    },
    release() {
      if (!ours(path)) return;
      try {
        unlinkSync(path);
      } catch {
        // already gone
      }
    },
  };
}

export interface SenderInfo {
  pid: number;
  /** ms epoch of its last heartbeat. */
  beatAt: number;
}

/** The running sender, judged as the quick hook judges it (a lock rewritten within SENDER_STALE_MS), or null. */
export function runningSender(stateDir: string, now = Date.now()): SenderInfo | null {
  const path = lockPath(stateDir);
  try {
    const mtime = statSync(path).mtimeMs;
    if (now - mtime >= SENDER_STALE_MS) return null;
    const pid = Number(readFileSync(path, 'utf8').split(' ')[0]);
    return pid > 0 ? { pid, beatAt: mtime } : null;
  } catch {
    return null;
  }
}

/** Asks the running sender to stop (SIGTERM: it sends what it holds once more, then leaves); its pid, or null. */
export function stopSender(stateDir: string, now = Date.now()): number | null {
  const running = runningSender(stateDir, now);
  if (!running) return null;
  try {
    process.kill(running.pid, 'SIGTERM');
    return running.pid;
  } catch {
    return null;
  }
}
