// Draining the inbox: each entry a quick hook left is run through the hook's own handler in spool-only mode
// (adapter, gate 0, project key, redaction, the private-prompt check) and its event appended to the spool;
// then the entry is removed. One drainer at a time (a lock file); oldest entry first.
import { readdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ENTRY_SUFFIX, INBOX_DIR, parseEntry } from '../inbox/entry';
import type { Io } from '../io';
import { killPoint } from '../util/kill-point';
import { acquireLock } from '../spool/lock';
import { updateState } from '../state';
import { handleHook } from './handle';

export interface DrainReport {
  drained: number;
  /** Entries still in the inbox (the deadline came, or another process holds the drain lock). */
  left: number;
  busy: boolean;
}

/** A dot file (an entry being written) older than this was left by a hook killed mid-write. */
const ORPHAN_MS = 60_000;

export const inboxDir = (stateDir: string) => join(stateDir, INBOX_DIR);

/** Entry names, oldest first. */
export function inboxEntries(stateDir: string): string[] {
  try {
    return readdirSync(inboxDir(stateDir))
      .filter((n) => n.endsWith(ENTRY_SUFFIX) && !n.startsWith('.'))
      .sort();
  } catch {
    return [];
  }
}

/**
 * Drains what is in the inbox by `deadline` (local work only, ~1 ms an entry), waiting up to `waitMs` for
 * another drainer. `env` is the draining process's environment; an entry's own CAIRN_SKIP_TOOLS /
 * CAIRN_EXCLUDE_PROJECTS, recorded by its hook, take precedence.
 */
export async function drainInbox(stateDir: string, env: Io['env'], deadline: number, waitMs = 0): Promise<DrainReport> {
  const names = inboxEntries(stateDir);
  if (!names.length) return { drained: 0, left: 0, busy: false };
  const release = acquireLock(join(stateDir, 'inbox.lock'), waitMs);
  if (!release) return { drained: 0, left: names.length, busy: true };
  let drained = 0;
  try {
    // Listed again under the lock: the last drainer may have taken some.
    const todo = inboxEntries(stateDir);
    for (const name of todo) {
      if (Date.now() >= deadline) break;
      const file = join(inboxDir(stateDir), name);
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        continue;
      }
      const entry = parseEntry(text);
      if (entry) {
        const io: Io = {
          env: { ...env, ...entry.head.env },
          cwd: entry.head.cwd,
          readStdin: async () => entry.stdin,
          out: () => {},
          err: () => {},
          // The event happened when its hook ran: occurred_at and the private-prompt check use that time.
          now: () => entry.head.at,
          isTty: false,
        };
        await handleHook(entry.head.event, io, entry.head.at, entry.head.agent, { spoolOnly: true, entryKey: name });
        killPoint('drain-spooled');
      } else {
        updateState(stateDir, {
          lastError: { at: Date.now(), message: `inbox entry ${name} was unreadable and was removed` },
        });
      }
      try {
        unlinkSync(file);
      } catch {
        // removed by a drainer that broke our lock as stale: its copy has the same event_id
      }
      drained++;
    }
    removeOrphans(stateDir);
  } finally {
    release();
  }
  return { drained, left: inboxEntries(stateDir).length, busy: false };
}

function removeOrphans(stateDir: string): void {
  const dir = inboxDir(stateDir);
  try {
    for (const n of readdirSync(dir)) {
      if (!n.startsWith('.')) continue;
      try {
        if (Date.now() - statSync(join(dir, n)).mtimeMs > ORPHAN_MS) unlinkSync(join(dir, n));
      } catch {
        // renamed into place meanwhile
      }
    }
  } catch {
    // no inbox
  }
}
