// Continue anywhere on this machine (issue 36): which session a checkout's next agent session picks up (`cairn
// continue` writes it; the next SessionStart in that checkout injects its handoff once and removes it), and which
// session last started in a checkout (so `cairn handoff` knows where a note goes). Small owner-only files in the
// state folder, one per checkout, named by a hash of its root.
import { readFileSync, renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex } from '../util/ids';
import { ensurePrivateDir, safeWriteFile } from '../util/safe-write';

export interface PendingHandoff {
  /** The session whose handoff the next session starts with. */
  session: string;
  project: string;
  /** The block as `cairn continue` got it: injected when the server cannot be asked again at SessionStart. */
  text: string;
  at: number;
}

export interface LastSession {
  session: string;
  project: string;
  at: number;
}

/** A pending handoff older than this is not injected (the user moved on). */
export const PENDING_MAX_AGE_MS = 7 * 86_400_000;

const fileOf = (stateDir: string, kind: 'pending' | 'last', root: string) =>
  join(stateDir, 'handoff', `${kind}-${sha256Hex(root).slice(0, 24)}.json`);

function read<T>(path: string): T | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return null;
  }
}

function write(stateDir: string, path: string, value: unknown): void {
  ensurePrivateDir(stateDir);
  ensurePrivateDir(join(stateDir, 'handoff'));
  safeWriteFile(path, JSON.stringify(value));
}

export function setPendingHandoff(stateDir: string, root: string, h: PendingHandoff): void {
  write(stateDir, fileOf(stateDir, 'pending', root), h);
}

/** The checkout's pending handoff, without taking it (`cairn status`); null when none or too old. */
export function pendingHandoff(stateDir: string, root: string, now: number): PendingHandoff | null {
  const h = read<PendingHandoff>(fileOf(stateDir, 'pending', root));
  if (!h || typeof h.session !== 'string' || typeof h.text !== 'string' || typeof h.at !== 'number') return null;
  return now - h.at <= PENDING_MAX_AGE_MS ? h : null;
}

/**
 * Takes the checkout's pending handoff for one session: the file is renamed away first, so two sessions starting at
 * once cannot both inject it (the rename succeeds for one of them). Null when there is none (or it is too old).
 */
export function takePendingHandoff(stateDir: string, root: string, now: number): PendingHandoff | null {
  const path = fileOf(stateDir, 'pending', root);
  const taken = `${path}.${process.pid}.taken`;
  try {
    renameSync(path, taken);
  } catch {
    return null;
  }
  const h = read<PendingHandoff>(taken);
  try {
    unlinkSync(taken);
  } catch {
    // gone already
  }
  if (!h || typeof h.session !== 'string' || typeof h.text !== 'string' || typeof h.at !== 'number') return null;
  return now - h.at <= PENDING_MAX_AGE_MS ? h : null;
}

export function noteLastSession(stateDir: string, root: string, s: LastSession): void {
  try {
    write(stateDir, fileOf(stateDir, 'last', root), s);
  } catch {
    // advisory: `cairn handoff --session` still works
  }
}

export function lastSession(stateDir: string, root: string): LastSession | null {
  const s = read<LastSession>(fileOf(stateDir, 'last', root));
  return s && typeof s.session === 'string' ? s : null;
}
