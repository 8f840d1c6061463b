// The tool calls of a session this machine has already spooled (by PostToolUse, through the command hook or
// the sender's HTTP door), so that Stop's transcript reconciliation re-sends only the ones whose hook never
// arrived (no sender running, a hook killed at exit) and can afford to look at every call of the prompt.
import { appendFileSync, mkdirSync, readFileSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex } from '../util/ids';

const DIR = 'seen';
const MAX_AGE_MS = 7 * 86_400_000;
/** Read at most this much of a session's list (its newest ids): a prompt's calls are near the end. */
const MAX_READ = 1_000_000;

const fileOf = (stateDir: string, sessionId: string) => join(stateDir, DIR, `${sha256Hex(sessionId).slice(0, 32)}.ids`);

/** Notes one spooled tool call; best effort (a missing note only means Stop sends that call once more). */
export function noteSeenCall(stateDir: string, sessionId: string | null, toolUseId: string | null): void {
  if (!sessionId || !toolUseId || /[\r\n]/.test(toolUseId)) return;
  try {
    mkdirSync(join(stateDir, DIR), { recursive: true, mode: 0o700 });
    appendFileSync(fileOf(stateDir, sessionId), `${toolUseId}\n`, { mode: 0o600 });
  } catch {
    // the note only saves a repeat
  }
}

export function seenCalls(stateDir: string, sessionId: string): Set<string> {
  try {
    const text = readFileSync(fileOf(stateDir, sessionId), 'utf8');
    return new Set(text.slice(-MAX_READ).split('\n').filter(Boolean));
  } catch {
    return new Set();
  }
}

/** Lists of sessions untouched for a week are removed (the sender does it when it starts). */
export function pruneSeenCalls(stateDir: string, now: number): void {
  const dir = join(stateDir, DIR);
  try {
    for (const name of readdirSync(dir)) {
      try {
        if (now - statSync(join(dir, name)).mtimeMs > MAX_AGE_MS) unlinkSync(join(dir, name));
      } catch {
        // gone already
      }
    }
  } catch {
    // none yet
  }
}
