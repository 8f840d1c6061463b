// When the door's port is held by a listener that is not cairn's (another account can bind any free port on
// 127.0.0.1): the door closes. Every settings file that names it gets command hooks again (Claude Code reads
// settings when a session starts, so new sessions no longer POST there), the nonce that listener may have seen is
// never accepted again, and the state says so for the status line, `cairn status` and the next context.
// Sessions already running keep POSTing to the port until they end; Stop's transcript reconciliation sends their
// calls to cairn either way.
import { existsSync } from 'node:fs';
import { applyEdits } from '../agents/apply';
import { jsonEdit } from '../agents/file-edit';
import { withDoorRenewed, withoutDoor } from '../agents/settings-merge';
import { pathsFor } from '../config';
import type { Io } from '../io';
import { newNonce, readDoor, writeDoor, type DoorState } from './state';

/** An Io that writes nowhere: the sender and hooks have no terminal to print the edits to. */
const quietIo = (env: Io['env'], now: () => number): Io => ({
  env,
  cwd: '/',
  readStdin: async () => '',
  out: () => {},
  err: () => {},
  now,
  isTty: false,
});

/** Closes the door because of `detail` (what was found on the port). Returns the closed state. */
export function closeDoor(stateDir: string, env: Io['env'], detail: string, now: number): DoorState | null {
  const door = readDoor(stateDir, env);
  if (!door) return null;
  // A file the user deleted since is not made again.
  const edits = door.settings
    .filter((s) => existsSync(s.path))
    .map((s) => ({ ...jsonEdit(s.path, withoutDoor, (x) => x), root: s.root }));
  const io = quietIo(env, () => now);
  if (edits.length) applyEdits(edits, io, pathsFor(env), false);
  const closed: DoorState = {
    ...door,
    nonce: newNonce(),
    issuedAt: now,
    previous: [],
    settings: [],
    taken: { at: now, port: door.port, detail },
  };
  writeDoor(stateDir, closed);
  return closed;
}

/** After `cairn install` re-issued the door: the other settings files that name it get its port and new nonce. */
export function renewDoorSettings(door: DoorState, except: string, io: Io): boolean {
  const edits = door.settings
    .filter((s) => s.path !== except && existsSync(s.path))
    .map((s) => ({
      ...jsonEdit(
        s.path,
        (x) => withDoorRenewed(x, door.port, door.nonce),
        (x) => x,
      ),
      root: s.root,
      secret: () => true,
    }));
  return !edits.length || applyEdits(edits, io, pathsFor(io.env), false);
}
