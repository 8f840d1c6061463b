// The capture policy on this machine (issue 38, docs/contracts.md "Capture policy"): per checkout (its git top
// level), the mode the team's admins set as the last session start heard it (`x-cairn-capture`), and the person's
// own answer (`/cairn:capture on|off`). One small JSON file in the state dir, bounded; read by the hooks and the
// status line. The person's pause and excluded projects are judged where they always were (hook/handle.ts, hook/gate.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CAPTURE_HEADER, parseCaptureMode, type CaptureMode } from '#shared/capture';
import { ensurePrivateDir, safeWriteFile } from '../util/safe-write';

export interface CheckoutCapture {
  /** What the server last said for this checkout (absent: never asked; the default is `on`). */
  server?: CaptureMode;
  /** The person's answer for this checkout. */
  answer?: 'on' | 'off';
  /** Last time either was written (oldest checkouts are dropped past MAX_CHECKOUTS). */
  at: number;
}

export interface CaptureState {
  checkouts: Record<string, CheckoutCapture>;
  /** Sessions whose first prompt was already blocked to ask (asked once a session), and when. */
  asked: Record<string, number>;
}

const MAX_CHECKOUTS = 200;
const DAY_MS = 86_400_000;
const file = (stateDir: string) => join(stateDir, 'capture.json');

export function readCapture(stateDir: string): CaptureState {
  const out: CaptureState = { checkouts: {}, asked: {} };
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(file(stateDir), 'utf8'));
  } catch {
    return out;
  }
  if (!v || typeof v !== 'object') return out;
  const raw = v as { checkouts?: unknown; asked?: unknown };
  if (raw.checkouts && typeof raw.checkouts === 'object') {
    for (const [root, c] of Object.entries(raw.checkouts as Record<string, unknown>)) {
      if (!c || typeof c !== 'object') continue;
      const e = c as Record<string, unknown>;
      const server = parseCaptureMode(e.server);
      const answer = e.answer === 'on' || e.answer === 'off' ? e.answer : undefined;
      out.checkouts[root] = {
        ...(server ? { server } : {}),
        ...(answer ? { answer } : {}),
        at: typeof e.at === 'number' ? e.at : 0,
      };
    }
  }
  if (raw.asked && typeof raw.asked === 'object')
    for (const [sid, at] of Object.entries(raw.asked as Record<string, unknown>))
      if (typeof at === 'number') out.asked[sid] = at;
  return out;
}

function write(stateDir: string, s: CaptureState, now: number): void {
  const roots = Object.entries(s.checkouts).sort((a, b) => b[1].at - a[1].at);
  s.checkouts = Object.fromEntries(roots.slice(0, MAX_CHECKOUTS));
  for (const [sid, at] of Object.entries(s.asked)) if (now - at > DAY_MS) delete s.asked[sid];
  try {
    ensurePrivateDir(stateDir);
    safeWriteFile(file(stateDir), JSON.stringify(s));
  } catch {
    // advisory: the next session start hears the server again
  }
}

/**
 * The mode a context answer (GET or POST /api/context) carries: a server that sends none has no policy (`on`). Only
 * a 200 is heard; an unreachable server leaves the last mode kept.
 */
export function captureHeard(headers: Record<string, string | string[] | undefined>): CaptureMode {
  const h = headers[CAPTURE_HEADER];
  return parseCaptureMode(Array.isArray(h) ? h[0] : h) ?? 'on';
}

/** Keeps what a session start heard for this checkout. */
export function noteServerMode(stateDir: string, root: string, mode: CaptureMode, now: number): void {
  const s = readCapture(stateDir);
  s.checkouts[root] = { ...s.checkouts[root], server: mode, at: now };
  write(stateDir, s, now);
}

/** Keeps the person's answer for this checkout; answers the mode that now applies. */
export function answerCapture(stateDir: string, root: string, answer: 'on' | 'off', now: number): CaptureMode {
  const s = readCapture(stateDir);
  s.checkouts[root] = { ...s.checkouts[root], answer, at: now };
  write(stateDir, s, now);
  return checkoutMode(s, root);
}

/**
 * Pure: the mode for a checkout, the most restrictive of the admins' and the person's. `ask` with an answer is the
 * answer; an answer `off` holds under any mode; the admins' `off` holds whatever the answer.
 */
export function checkoutMode(s: CaptureState, root: string): CaptureMode {
  const c = s.checkouts[root];
  const server = c?.server ?? 'on';
  if (server === 'off' || c?.answer === 'off') return 'off';
  if (server === 'ask') return c?.answer === 'on' ? 'on' : 'ask';
  return server;
}

/** True once per session: the first prompt of a session in a checkout still to be answered is blocked to ask. */
export function askOnce(stateDir: string, sessionId: string | null, now: number): boolean {
  const s = readCapture(stateDir);
  const key = sessionId ?? '';
  if (Object.hasOwn(s.asked, key)) return false;
  s.asked[key] = now;
  write(stateDir, s, now);
  return true;
}

/** The prompt that answers (`/cairn:capture on`, as typed or as Claude Code expands it) is never the one blocked. */
export const isCaptureCommand = (prompt: string | null): boolean =>
  /(?:^\s*|<command-name>)\/cairn:capture\b/.test(prompt ?? '');

export const askReason = (root: string) =>
  `cairn: your team's admins ask before sessions in ${root} are recorded in the team's memory. Answer with /cairn:capture on to record them or /cairn:capture off not to (kept for this checkout), then send your prompt again. Nothing is sent until you answer.`;
