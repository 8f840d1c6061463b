// `cairn statusline`: Claude Code's status line (settings `statusLine`), run on every refresh with the status
// JSON on stdin. One line: this session's remembered (stored by the server) and recalled counts, the local
// backlog, and whether memory is being made (ok, paused here with why, or the observer paused). Local files
// first; the server's answer is cached in the state dir and asked again at most every STALE_MS, so most
// refreshes touch no network. `--wrap <b64>` runs the user's own status line first and appends cairn's.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, pathsFor } from '../config';
import { readDoor } from '../door/state';
import { NONCE_ENV } from '../hook-door';
import { ENTRY_SUFFIX, INBOX_DIR } from '../inbox/entry';
import type { Io } from '../io';
import { call } from '../net/http';
import { Spool } from '../spool/spool';
import { ensurePrivateDir, safeWriteFile } from '../util/safe-write';
import { checkoutMode, readCapture } from './capture';
import { projectFor } from '../project/project-key';
import { leftText, pausedAt, readPauses, readSessionFacts } from './local';
import { renderStatus, type StatusCache } from './render';

/** How old the cached server answer may be before a refresh asks again. */
export const STALE_MS = 30_000;
/** The status line must never hang the prompt: one round trip at most this long. */
const FETCH_MS = 1_200;
const USER_LINE_MS = 2_000;

const cacheFile = (stateDir: string) => join(stateDir, 'statusline.json');

export function readCache(stateDir: string): StatusCache {
  try {
    const v = JSON.parse(readFileSync(cacheFile(stateDir), 'utf8')) as StatusCache;
    return v && typeof v === 'object'
      ? { observer: v.observer ?? null, sessions: v.sessions ?? {}, askedAt: v.askedAt ?? 0 }
      : { observer: null, sessions: {}, askedAt: 0 };
  } catch {
    return { observer: null, sessions: {}, askedAt: 0 };
  }
}

function writeCache(stateDir: string, c: StatusCache, now: number): void {
  // Only the sessions seen in the last day are kept: the file stays a few hundred bytes.
  for (const [k, v] of Object.entries(c.sessions)) if (now - v.at > 86_400_000) delete c.sessions[k];
  try {
    ensurePrivateDir(stateDir);
    safeWriteFile(cacheFile(stateDir), JSON.stringify(c));
  } catch {
    // the next refresh asks again
  }
}

interface StatusInput {
  sessionId: string | null;
  cwd: string;
}

function parseInput(stdin: string, fallbackCwd: string): StatusInput {
  try {
    const v = JSON.parse(stdin) as { session_id?: unknown; cwd?: unknown; workspace?: { current_dir?: unknown } };
    const s = (x: unknown) => (typeof x === 'string' && x && x.length <= 4096 ? x : null);
    return { sessionId: s(v.session_id), cwd: s(v.workspace?.current_dir) ?? s(v.cwd) ?? fallbackCwd };
  } catch {
    return { sessionId: null, cwd: fallbackCwd };
  }
}

async function refresh(
  io: Io,
  stateDir: string,
  cache: StatusCache,
  sessionId: string | null,
  now: number,
): Promise<void> {
  const config = loadConfig(io.env, pathsFor(io.env));
  if (!config.url || !config.token) return;
  // Claimed before asking: status lines of other sessions refreshing meanwhile use the cache, not the network.
  cache.askedAt = now;
  writeCache(stateDir, cache, now);
  const opts = { token: config.token, device: config.device, timeoutMs: FETCH_MS, maxBytes: 20_000 };
  const [state, session] = await Promise.all([
    call(config.url, '/api/observer/state', opts).catch(() => null),
    sessionId
      ? call(config.url, `/api/context/session?session=${encodeURIComponent(sessionId)}&max_chars=200`, opts).catch(
          () => null,
        )
      : Promise.resolve(null),
  ]);
  try {
    if (state?.status === 200) {
      const b = JSON.parse(state.text) as { state?: string; code?: string | null; notice?: string | null };
      cache.observer = { at: now, state: b.state ?? 'ok', code: b.code ?? null, notice: b.notice ?? null };
    } else {
      cache.observer = { at: now, state: state ? `http_${state.status}` : 'unreachable', code: null, notice: null };
    }
    if (sessionId && session?.status === 200) {
      const b = JSON.parse(session.text) as { observations?: unknown; memories?: { used?: unknown; stale?: unknown } };
      const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
      cache.sessions[sessionId] = {
        at: now,
        observations: n(b.observations),
        ...(b.memories && typeof b.memories === 'object'
          ? { memories: { used: n(b.memories.used), stale: n(b.memories.stale) } }
          : {}),
      };
    }
  } catch {
    // an answer that is not JSON: the cache keeps what it had
  }
  writeCache(stateDir, cache, now);
}

function inboxCount(stateDir: string): number {
  try {
    return readdirSync(join(stateDir, INBOX_DIR)).filter((n) => n.endsWith(ENTRY_SUFFIX) && !n.startsWith('.')).length;
  } catch {
    return 0;
  }
}

/** The user's own status line, run as Claude Code runs it (through the shell, the same JSON on stdin). */
function userLine(command: string, stdin: string, io: Io): string {
  const r = process.getBuiltinModule('node:child_process').spawnSync(command, {
    shell: true,
    input: stdin,
    encoding: 'utf8',
    timeout: USER_LINE_MS,
    env: io.env as NodeJS.ProcessEnv,
    cwd: io.cwd,
  });
  return (r.stdout ?? '').replace(/\s+$/, '');
}

export function decodeWrapped(b64: string | undefined): { command: string } | null {
  if (!b64) return null;
  try {
    const v = JSON.parse(Buffer.from(b64, 'base64url').toString('utf8')) as { command?: unknown };
    return v && typeof v.command === 'string' ? { command: v.command } : null;
  } catch {
    return null;
  }
}

/** The capture policy of the checkout the status line is drawn for, when it is not `on` (files only, no process). */
function captureHere(stateDir: string, cwd: string, now: number): 'off' | 'ask' | null {
  try {
    const mode = checkoutMode(readCapture(stateDir), projectFor(cwd, stateDir, now).root);
    return mode === 'on' ? null : mode;
  } catch {
    return null;
  }
}

export async function statusline(args: string[], io: Io): Promise<number> {
  const paths = pathsFor(io.env);
  const stdin = await io.readStdin();
  const input = parseInput(stdin, io.cwd);
  const now = io.now();
  const cache = readCache(paths.stateDir);
  if (now - cache.askedAt >= STALE_MS || (input.sessionId && !cache.sessions[input.sessionId]))
    await refresh(io, paths.stateDir, cache, input.sessionId, now);
  const config = loadConfig(io.env, paths);
  const stats = new Spool(paths.stateDir, { maxEvents: config.spoolMaxEvents, maxBytes: config.spoolMaxBytes }).stats();
  const pause = pausedAt(readPauses(paths.stateDir), input.sessionId, input.cwd, now);
  const ours = renderStatus({
    configured: Boolean(config.url && config.token),
    remembered: input.sessionId ? (cache.sessions[input.sessionId]?.observations ?? null) : null,
    recalled: input.sessionId ? readSessionFacts(paths.stateDir, input.sessionId).recalled : 0,
    memories: input.sessionId ? (cache.sessions[input.sessionId]?.memories ?? null) : null,
    backlog: stats.pendingEvents + inboxCount(paths.stateDir),
    pause: pause
      ? `${pause.scope === 'session' ? 'this session' : 'this folder'}, ${leftText(pause.until, now)}`
      : null,
    observer: cache.observer,
    capture: captureHere(paths.stateDir, input.cwd, now),
    // Only a session started with the door POSTs there; new sessions already use command hooks.
    doorTaken: Boolean(io.env[NONCE_ENV] && readDoor(paths.stateDir, io.env)?.taken),
  });
  const wrapped = args[0] === '--wrap' ? decodeWrapped(args[1]) : null;
  const theirs = wrapped ? userLine(wrapped.command, stdin, io) : '';
  io.out(`${theirs ? `${theirs}  ${ours}` : ours}\n`);
  return 0;
}
