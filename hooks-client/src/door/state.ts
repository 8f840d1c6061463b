// The HTTP hook door's state (`door.json` in the 0700 state folder, 0600): its port, chosen at random by
// `cairn install`; the nonce Claude Code sends in the hook's header (copied into the settings' `env`); the
// nonces of earlier installs, still good for the sessions that started with them (settings are read when a
// session starts) until those sessions end; the settings files that name the door; and whether a listener
// that was not cairn's held the port (then the door is closed and the hooks are command hooks again).
import { readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Io } from '../io';
import { sha256Hex } from '../util/ids';
import { ensurePrivateDir, PRIVATE_FILE, safeWriteFile } from '../util/safe-write';

export const DOOR_FILE = 'door.json';
const SESSIONS_FILE = 'door-sessions.json';
/** Before door.json: the nonce of installs made by older clients, and their port (41000 + uid mod 8000). */
const LEGACY_NONCE_FILE = 'sender.nonce';

/** Linux's ephemeral ports are 32768–60999, macOS's and Windows' 49152–65535: the door's port is below both. */
export const PORT_MIN = 20_000;
export const PORT_MAX = 32_767;
/** A session not seen for this long is taken to have ended (SessionEnd does not always run: a crash, a kill). */
export const SESSION_TTL_MS = 7 * 86_400_000;

export interface DoorSettings {
  path: string;
  /** The folder the file must stay in (a project install: the project). */
  root?: string;
}

export interface DoorState {
  v: 1;
  port: number;
  nonce: string;
  issuedAt: number;
  /** Nonces of earlier installs: accepted only from sessions that started with them (door-sessions.json). */
  previous: Array<{ nonce: string; issuedAt: number }>;
  settings: DoorSettings[];
  /** Set when a listener that could not prove the nonce held the port: the door is closed until `cairn install`. */
  taken: { at: number; port: number; detail: string } | null;
  /** Synthesised from an older client's sender.nonce (no door.json yet). */
  legacy?: true;
}

const file = (stateDir: string) => join(stateDir, DOOR_FILE);
const isNonce = (v: unknown): v is string => typeof v === 'string' && /^[A-Za-z0-9_-]{32,}$/.test(v);
const isPort = (v: unknown): v is number => Number.isInteger(v) && (v as number) > 0 && (v as number) < 65_536;

/** A fresh secret (Web Crypto, a global: node:crypto is never loaded by the client). */
export const newNonce = (): string =>
  Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(24))).toString('base64url');

/** A port in [PORT_MIN, PORT_MAX], at random. */
export const randomPort = (): number =>
  PORT_MIN + (globalThis.crypto.getRandomValues(new Uint32Array(1))[0]! % (PORT_MAX - PORT_MIN + 1));

/** An older client's port: CAIRN_SENDER_PORT, else 41000 + uid mod 8000. */
function legacyPort(env: Io['env']): number {
  const n = Number(env.CAIRN_SENDER_PORT);
  if (isPort(n)) return n;
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  return 41_000 + (uid % 8_000);
}

/** The door as recorded, or an older install's (sender.nonce at the derived port), or null: no door. */
export function readDoor(stateDir: string, env: Io['env'] = {}): DoorState | null {
  try {
    const v = JSON.parse(readFileSync(file(stateDir), 'utf8')) as Partial<DoorState>;
    if (v.v === 1 && isPort(v.port) && isNonce(v.nonce))
      return {
        v: 1,
        port: v.port,
        nonce: v.nonce,
        issuedAt: typeof v.issuedAt === 'number' ? v.issuedAt : 0,
        previous: Array.isArray(v.previous) ? v.previous.filter((p) => p && isNonce(p.nonce)) : [],
        settings: Array.isArray(v.settings) ? v.settings.filter((s) => s && typeof s.path === 'string') : [],
        taken: v.taken && typeof v.taken.at === 'number' ? v.taken : null,
      };
  } catch {
    // none yet, or an older client's
  }
  try {
    const legacy = readFileSync(join(stateDir, LEGACY_NONCE_FILE), 'utf8').trim();
    if (isNonce(legacy))
      return {
        v: 1,
        port: legacyPort(env),
        nonce: legacy,
        issuedAt: 0,
        previous: [],
        settings: [],
        taken: null,
        legacy: true,
      };
  } catch {
    // no door at all
  }
  return null;
}

export function writeDoor(stateDir: string, door: DoorState): void {
  ensurePrivateDir(stateDir);
  const { legacy: _legacy, ...kept } = door;
  safeWriteFile(file(stateDir), `${JSON.stringify(kept)}\n`, { mode: PRIVATE_FILE, exactMode: true });
  // An older client's secret is never read again once door.json exists.
  try {
    unlinkSync(join(stateDir, LEGACY_NONCE_FILE));
  } catch {
    // none
  }
}

export function removeDoor(stateDir: string): void {
  for (const name of [DOOR_FILE, LEGACY_NONCE_FILE, SESSIONS_FILE]) {
    try {
      unlinkSync(join(stateDir, name));
    } catch {
      // not there
    }
  }
}

/**
 * The door as `cairn install` will write it: a new nonce every time the door's settings are written (the old one
 * stays good only for the sessions that started with it). The port stays (other settings files name it) unless
 * there is none yet, the last one was taken, or `port` is given; then it is `port` or a random one `free` accepts.
 * Nothing is written: install saves it (writeDoor) once the settings file took it.
 */
export async function planDoor(
  stateDir: string,
  now: number,
  opts: { port?: number; settings: DoorSettings; free: (port: number) => Promise<boolean> },
): Promise<DoorState> {
  const before = readDoor(stateDir);
  let port = opts.port ?? (before && !before.taken && !before.legacy ? before.port : 0);
  for (let i = 0; !port && i < 20; i++) {
    const p = randomPort();
    if (await opts.free(p)) port = p;
  }
  if (!port) port = randomPort();
  const live = liveNonceHashes(stateDir, now);
  // The nonce a taken port's listener may have seen is never good again; earlier ones only while sessions use them.
  const previous =
    before && !before.taken ? [{ nonce: before.nonce, issuedAt: before.issuedAt }, ...before.previous] : [];
  return {
    v: 1,
    port,
    nonce: newNonce(),
    issuedAt: now,
    previous: previous.filter((p) => live.has(nonceHash(p.nonce))),
    settings: [...(before?.settings ?? []).filter((s) => s.path !== opts.settings.path), opts.settings],
    taken: null,
  };
}

/** CAIRN_SENDER_PORT, when set to a port: install uses it instead of a random one. */
export function portOverride(env: Io['env']): number | undefined {
  const n = Number(env.CAIRN_SENDER_PORT);
  return env.CAIRN_SENDER_PORT && isPort(n) ? n : undefined;
}

/** `cairn uninstall` of one settings file: it no longer names the door; with none left there is no door. */
export function forgetDoorSettings(stateDir: string, path: string): void {
  const door = readDoor(stateDir);
  if (!door) return;
  const settings = door.settings.filter((s) => s.path !== path);
  if (settings.length) writeDoor(stateDir, { ...door, settings });
  else removeDoor(stateDir);
}

// ── Which sessions started with which nonce ──

/** Short: the file says which nonce a session uses, not the nonce itself. */
export const nonceHash = (nonce: string) => sha256Hex(`cairn-door-session\n${nonce}`).slice(0, 32);

interface Sessions {
  [sessionId: string]: { nonce: string; seen: number };
}

function readSessions(stateDir: string): Sessions {
  try {
    const v: unknown = JSON.parse(readFileSync(join(stateDir, SESSIONS_FILE), 'utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Sessions) : {};
  } catch {
    return {};
  }
}

function writeSessions(stateDir: string, s: Sessions): void {
  try {
    ensurePrivateDir(stateDir);
    safeWriteFile(join(stateDir, SESSIONS_FILE), JSON.stringify(s), { mode: PRIVATE_FILE, exactMode: true });
  } catch {
    // the session's calls then come through Stop's transcript reconciliation if its nonce is an old one
  }
}

/** Hashes of nonces some session seen within SESSION_TTL_MS started with. */
function liveNonceHashes(stateDir: string, now: number): Set<string> {
  return new Set(
    Object.values(readSessions(stateDir))
      .filter((e) => now - e.seen < SESSION_TTL_MS)
      .map((e) => e.nonce),
  );
}

/** Refreshed at most this often per session (a prompt's hook writes nothing most of the time). */
const SEEN_EVERY_MS = 3_600_000;

/**
 * SessionStart and UserPromptSubmit note which nonce their session started with (the hook's own environment:
 * the settings `env` of the session's start). The file is written only when that changes or an hour passed.
 */
export function noteSession(stateDir: string, sessionId: string, nonce: string, now: number): void {
  if (!isNonce(nonce) || !sessionId) return;
  const all = readSessions(stateDir);
  const hash = nonceHash(nonce);
  const had = all[sessionId];
  if (had && had.nonce === hash && now - had.seen < SEEN_EVERY_MS) return;
  all[sessionId] = { nonce: hash, seen: now };
  for (const [k, v] of Object.entries(all)) if (now - v.seen >= SESSION_TTL_MS) delete all[k];
  writeSessions(stateDir, all);
}

/** SessionEnd: the session's nonce is no longer needed for it. */
export function endSession(stateDir: string, sessionId: string): void {
  const all = readSessions(stateDir);
  if (!all[sessionId]) return;
  delete all[sessionId];
  writeSessions(stateDir, all);
}

/**
 * Whether the door takes `nonce` for a call of `sessionId`: the current nonce always; an earlier install's
 * only from a session that started with it and was seen within SESSION_TTL_MS; none while the door is taken.
 */
export function nonceAccepted(
  door: DoorState,
  stateDir: string,
  nonce: string,
  sessionId: string | null,
  now: number,
): 'current' | 'previous' | null {
  if (door.taken) return null;
  if (sameText(nonce, door.nonce)) return 'current';
  if (!sessionId || !door.previous.some((p) => sameText(nonce, p.nonce))) return null;
  const e = readSessions(stateDir)[sessionId];
  return e && e.nonce === nonceHash(nonce) && now - e.seen < SESSION_TTL_MS ? 'previous' : null;
}

/** Constant-time comparison (its time depends on the lengths only, which are not the secret). */
export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  if (x.length !== y.length) return false;
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i]! ^ y[i]!;
  return diff === 0;
}
