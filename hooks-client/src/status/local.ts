// What this machine knows of a session without asking the server: how often memory was brought into it
// (recalled), and whether recording is paused for it or for its folder. Small JSON files in the state dir,
// read by the hooks and the status line; writes are read-modify-write (the last writer wins, which is fine
// for counters shown to a person and for pauses set by hand).
import { readFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { ensurePrivateDir, safeWriteFile } from '../util/safe-write';

export interface SessionFacts {
  recalled: number;
  /** Tool events this machine recorded for the session (drained into the spool). */
  captured: number;
}

export interface Pause {
  /** ms epoch; Number.MAX_SAFE_INTEGER = until resumed. */
  until: number;
  at: number;
}

export interface Pauses {
  sessions: Record<string, Pause>;
  folders: Record<string, Pause>;
  /** When each session or folder was last resumed: a Stop after a resume must not backfill calls made before it. */
  resumed: Record<string, number>;
}

export const FOREVER = Number.MAX_SAFE_INTEGER;

const factsFile = (stateDir: string, sessionId: string) =>
  join(stateDir, 'sessions', `${sessionId.replace(/[^\w.-]/g, '_').slice(0, 200)}.json`);
const pausesFile = (stateDir: string) => join(stateDir, 'pauses.json');

function readJson<T>(path: string): Partial<T> {
  try {
    const v: unknown = JSON.parse(readFileSync(path, 'utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Partial<T>) : {};
  } catch {
    return {};
  }
}

function writeJson(path: string, value: unknown): void {
  try {
    ensurePrivateDir(dirname(path));
    safeWriteFile(path, JSON.stringify(value));
  } catch {
    // advisory: a counter or pause not written is reported by the next status line as it was
  }
}

export function readSessionFacts(stateDir: string, sessionId: string): SessionFacts {
  const f = readJson<SessionFacts>(factsFile(stateDir, sessionId));
  return {
    recalled: typeof f.recalled === 'number' ? f.recalled : 0,
    captured: typeof f.captured === 'number' ? f.captured : 0,
  };
}

export function bumpSessionFact(stateDir: string, sessionId: string | null, key: keyof SessionFacts, by = 1): void {
  if (!sessionId || by <= 0) return;
  const facts = readSessionFacts(stateDir, sessionId);
  facts[key] += by;
  writeJson(factsFile(stateDir, sessionId), facts);
}

export function readPauses(stateDir: string): Pauses {
  const p = readJson<Pauses>(pausesFile(stateDir));
  const obj = <T>(v: unknown): Record<string, T> =>
    v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, T>) : {};
  return { sessions: obj<Pause>(p.sessions), folders: obj<Pause>(p.folders), resumed: obj<number>(p.resumed) };
}

/** `folder` itself or a folder inside it. */
const inside = (cwd: string, folder: string): boolean =>
  cwd === folder || cwd.startsWith(folder.endsWith(sep) ? folder : `${folder}${sep}`);

export interface PauseVerdict {
  scope: 'session' | 'folder';
  until: number;
  folder?: string;
}

/** Pure: whether recording is paused for this session or folder at `now`. */
export function pausedAt(p: Pauses, sessionId: string | null, cwd: string, now: number): PauseVerdict | null {
  const s = sessionId ? p.sessions[sessionId] : undefined;
  if (s && s.at <= now && now < s.until) return { scope: 'session', until: s.until };
  for (const [folder, f] of Object.entries(p.folders)) {
    if (f.at <= now && now < f.until && inside(cwd, folder)) return { scope: 'folder', until: f.until, folder };
  }
  return null;
}

/** The latest resume that applies to this session or folder (0 when none). */
export function resumedAt(p: Pauses, sessionId: string | null, cwd: string): number {
  let at = sessionId ? (p.resumed[`session:${sessionId}`] ?? 0) : 0;
  for (const [k, v] of Object.entries(p.resumed))
    if (k.startsWith('folder:') && inside(cwd, k.slice(7))) at = Math.max(at, v);
  return at;
}

/** Pauses a session or folder until `until`; expired pauses are dropped on the way. */
export function setPause(stateDir: string, scope: 'session' | 'folder', key: string, now: number, until: number): void {
  const p = prune(readPauses(stateDir), now);
  (scope === 'session' ? p.sessions : p.folders)[key] = { at: now, until };
  writeJson(pausesFile(stateDir), p);
}

/** Ends a pause; true when there was one. */
export function clearPause(stateDir: string, scope: 'session' | 'folder', key: string, now: number): boolean {
  const p = prune(readPauses(stateDir), now);
  const map = scope === 'session' ? p.sessions : p.folders;
  const had = Object.hasOwn(map, key);
  delete map[key];
  p.resumed[`${scope}:${key}`] = now;
  writeJson(pausesFile(stateDir), p);
  return had;
}

const DAY_MS = 86_400_000;

function prune(p: Pauses, now: number): Pauses {
  for (const map of [p.sessions, p.folders])
    for (const [k, v] of Object.entries(map)) if (!(v.until > now)) delete map[k];
  for (const [k, v] of Object.entries(p.resumed)) if (now - v > DAY_MS) delete p.resumed[k];
  return p;
}

/** "1 h 20 min" style, for the status line and the commands. */
export function leftText(until: number, now: number): string {
  if (until >= FOREVER) return 'until resumed';
  const min = Math.max(1, Math.round((until - now) / 60_000));
  return min < 60 ? `${min} min left` : `${Math.floor(min / 60)} h${min % 60 ? ` ${min % 60} min` : ''} left`;
}
