// What SessionStart and UserPromptSubmit do about the door before the turn's tool calls POST to it: note which
// nonce this session started with (settings are read at a session's start, so a re-install does not reach it),
// make sure cairn's sender holds the port, and when a listener that is not cairn's holds it instead, close the
// door (door/close.ts) and say so to the user and the agent.
import { SENDER_LOCK, SENDER_SPAWNED, SENDER_STALE_MS } from '../inbox/entry';
import { ensureSender } from '../inbox/quick';
import type { Io } from '../io';
import { NONCE_ENV } from '../hook-door';
import { probeDoor } from './proof';
import { endSession, noteSession, readDoor, type DoorState } from './state';

/** The probe is one loopback round trip; a sender answering a challenge takes a millisecond. */
const PROBE_MS = 400;
/** A sender spawned this recently is still starting: its own bind checks the port. */
const STARTING_MS = 5_000;

function fresh(path: string, now: number, ms: number): boolean {
  try {
    return now - process.getBuiltinModule('node:fs').statSync(path).mtimeMs < ms;
  } catch {
    return false;
  }
}

/** The words for a closed door, for the session that was started with it (it still POSTs there until restarted). */
export function doorNotice(door: DoorState): string {
  const t = door.taken!;
  return `cairn warning: ${t.detail}. Claude Code sends this session's tool calls (as they are, before cairn redacts them) to that port, so another program may be receiving them. cairn closed its hook door: new sessions use command hooks. Restart Claude Code now; \`cairn status\` says more, and \`cairn install\` picks a new port. Tell the user.`;
}

/**
 * For SessionStart and UserPromptSubmit of a Claude Code session: the notice to show when this session's door is
 * closed (or just found taken), else null; and the sender is started when none runs.
 */
export async function guardDoor(
  io: Io,
  stateDir: string,
  clientPath: string | null,
  sessionId: string | null,
): Promise<string | null> {
  const now = io.now();
  const nonce = io.env[NONCE_ENV] ?? '';
  if (sessionId && nonce) noteSession(stateDir, sessionId, nonce, now);
  const door = nonce ? readDoor(stateDir, io.env) : null;
  if (door?.taken) return doorNotice(door);
  const idle =
    !fresh(`${stateDir}/${SENDER_LOCK}`, now, SENDER_STALE_MS) &&
    !fresh(`${stateDir}/${SENDER_SPAWNED}`, now, STARTING_MS);
  // No sender of ours runs, so nothing of ours should listen there: whatever does must prove it holds the nonce.
  if (door && idle && (await probeDoor(door.port, door.nonce, PROBE_MS)) === 'foreign') {
    // Loaded only here: closing the door edits settings files (agents/), which no ordinary hook needs.
    const { closeDoor } = await import('./close');
    const closed = closeDoor(
      stateDir,
      io.env,
      `127.0.0.1:${door.port}, cairn's hook door, is held by a listener that is not cairn's sender (it could not prove the door's secret)`,
      now,
    );
    return closed ? doorNotice(closed) : null;
  }
  if (clientPath) ensureSender(stateDir, clientPath);
  return null;
}

/** SessionEnd: the session no longer needs the nonce it started with. */
export function sessionEnded(stateDir: string, sessionId: string | null): void {
  if (sessionId) endSession(stateDir, sessionId);
}
