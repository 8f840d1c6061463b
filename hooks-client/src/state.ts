// Small facts the client remembers between runs: last error, last delivery, server capabilities, warnings.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDir, safeWriteFile } from './util/safe-write';

export interface ClientState {
  lastError?: { at: number; message: string } | null;
  lastDeliveredAt?: number;
  /** The server answered 404 to /api/events/batch: use single routes until then. */
  batchUnsupportedUntil?: number;
  /** Last spool warning shown in a session's context, so it is said once, not in every session. */
  spoolWarnedAt?: number;
  spoolWarnedDropped?: number;
}

const file = (stateDir: string) => join(stateDir, 'state.json');

export function readState(stateDir: string): ClientState {
  try {
    return JSON.parse(readFileSync(file(stateDir), 'utf8')) as ClientState;
  } catch {
    return {};
  }
}

/** Read-modify-write; concurrent hooks may race, and the last writer winning is fine for these facts. */
export function updateState(stateDir: string, patch: Partial<ClientState>): void {
  try {
    // Owner-only folder and file (they name the user's projects); a link is never written through.
    ensurePrivateDir(stateDir);
    safeWriteFile(file(stateDir), JSON.stringify({ ...readState(stateDir), ...patch }));
  } catch {
    // state is advisory
  }
}
