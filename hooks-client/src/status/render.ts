// The status line's text. Pure: facts in, one line out. What the server said is made inert first (termLine):
// Claude Code draws this line in the user's terminal.
import { termLine } from '../util/terminal';

export interface StatusCache {
  /** The team's observer as the server last said (GET /api/observer/state). */
  observer: { at: number; state: string; code: string | null; notice: string | null } | null;
  /**
   * Per session: how many observations the server holds for it, how many memories went into it and how many of
   * those were stale when sent (its receipts; absent from servers before them), and when it said so.
   */
  sessions: Record<string, { at: number; observations: number; memories?: { used: number; stale: number } }>;
  /** When a status line last asked the server (claimed before asking). */
  askedAt: number;
}

export interface StatusFacts {
  configured: boolean;
  /** null: the server has not said yet. */
  remembered: number | null;
  /** Injections this machine made into the session (a server without receipts: the line shows this instead). */
  recalled: number;
  /** The server's receipts of the session: memories it was given, and how many were stale (code changed or gone). */
  memories?: { used: number; stale: number } | null;
  /** Events on this machine not yet taken by the server (spool and inbox). */
  backlog: number;
  /** Why recording is paused here ("this session, until resumed"), or null. */
  pause: string | null;
  observer: StatusCache['observer'];
  /** The capture policy for this checkout when it is not `on` (status/capture.ts): nothing is recorded / asked. */
  capture?: 'off' | 'ask' | null;
  /** This session's HTTP hook door was found held by a listener that is not cairn's (door/close.ts). */
  doorTaken?: boolean;
}

const CODE_MAX = 40;

/** The observer part: ok, or the server's state with its code (never its free text: the line is short). */
function observerPart(cached: StatusCache['observer']): string {
  if (!cached) return 'server not asked yet';
  const o = { ...cached, state: termLine(cached.state), code: cached.code === null ? null : termLine(cached.code) };
  if (o.state === 'ok') return 'ok';
  if (o.state === 'unreachable') return 'server unreachable';
  if (o.state.startsWith('http_')) return `server answered ${o.state.slice(5)}`;
  const what = o.state === 'failing' ? 'memory paused' : o.state === 'backing_off' ? 'memory delayed' : o.state;
  return `${what}${o.code ? `: ${o.code.slice(0, CODE_MAX)}` : ''}`;
}

/** `14 memories used, 2 stale`: what went into the session and how much of it the code no longer bears out. */
function memoriesPart(m: { used: number; stale: number }): string {
  const used = Math.max(0, Math.trunc(m.used));
  const stale = Math.min(used, Math.max(0, Math.trunc(m.stale)));
  return `${used} ${used === 1 ? 'memory' : 'memories'} used${stale ? `, ${stale} stale` : ''}`;
}

export function renderStatus(f: StatusFacts): string {
  if (!f.configured) return 'cairn: not logged in (cairn login)';
  const parts = [
    `${f.remembered === null ? '?' : f.remembered} remembered`,
    f.memories ? memoriesPart(f.memories) : `${f.recalled} recalled`,
    `${f.backlog} waiting`,
  ];
  const state = f.pause
    ? `paused (${f.pause})`
    : f.capture === 'off'
      ? 'capture off'
      : f.capture === 'ask'
        ? 'capture asks: /cairn:capture on|off'
        : observerPart(f.observer);
  const stopped = f.pause || f.capture === 'off';
  const line = `cairn ${stopped ? '⏸' : f.observer?.state === 'ok' && !f.capture ? '●' : '○'} ${parts.join(' · ')} · ${state}`;
  return f.doorTaken
    ? `cairn ⚠ hook door taken by another program: restart Claude Code (cairn status) · ${line.slice(6)}`
    : line;
}
