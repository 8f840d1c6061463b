// The quick entry: what an async hook (post-tool-use) runs, before the client is even compiled. It reads stdin,
// writes it to the inbox in one durable step and makes sure the background sender runs; nothing else. No
// node:net, no config, no redaction here: those run in the sender (or the next synchronous hook) before
// anything leaves the machine. Imported by boot.ts, so it must stay small and import only node:fs/node:path.
import { fstatSync, mkdirSync, readSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { killPoint } from '../util/kill-point';
import {
  ENTRY_ENV_KEYS,
  entryName,
  formatEntry,
  INBOX_DIR,
  QUICK_EVENTS,
  SENDER_LOCK,
  SENDER_SPAWNED,
  SENDER_STALE_MS,
  type EntryHead,
} from './entry';

/** Agents whose hooks may take the quick path (the full path names an unknown one on stderr). */
const AGENTS = ['claude-code', 'codex', 'gemini', 'cursor', 'opencode'];
/** After one hook started a sender, others within this time trust it is coming up (no spawn storm). */
const SPAWN_GRACE_MS = 5_000;

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * Handles `hook <quick event> [--agent NAME]` and returns true, or returns false to let the full client run
 * it: another command, CAIRN_SENDER=off (no background process; the hook sends itself, as before), an
 * unknown agent, or an inbox that cannot be written.
 */
export function quickHook(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  stateDir: string,
  clientPath: string | undefined,
): boolean {
  if (argv[0] !== 'hook' || !QUICK_EVENTS.includes(argv[1] ?? '') || env.CAIRN_SENDER === 'off' || !clientPath)
    return false;
  const agent = agentOf(argv.slice(2));
  if (!AGENTS.includes(agent)) return false;
  // cairn's own traffic (an observer or import running Claude): the full path would skip it too.
  if (env.CAIRN_INTERNAL === '1') return true;
  const stdin = readStdin();
  if (stdin === null) return false;
  const head: EntryHead = { v: 1, at: Date.now(), event: argv[1]!, agent, cwd: process.cwd() };
  for (const k of ENTRY_ENV_KEYS) if (env[k] !== undefined) (head.env ??= {})[k] = env[k];
  const dir = join(stateDir, INBOX_DIR);
  const name = entryName(head.at, process.pid);
  try {
    writeEntryDurably(dir, name, formatEntry({ head, stdin }));
  } catch {
    return false;
  }
  killPoint('entry-renamed');
  // After the entry is in place: a sender that is just leaving looks at the inbox once more after it let go
  // of its lock, so either it sees this entry or this hook sees no lock and starts a new one.
  ensureSender(stateDir, clientPath);
  return true;
}

/** Writes one entry, making the inbox folder first when it is missing (the sender's HTTP door uses it too). */
export function writeEntryDurably(dir: string, name: string, text: string): void {
  try {
    writeEntry(dir, name, text);
  } catch {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeEntry(dir, name, text);
  }
}

/** Written under a dot name, then renamed: a drainer never sees half an entry; a killed hook leaves a dot file. */
function writeEntry(dir: string, name: string, text: string): void {
  const tmp = join(dir, `.${name}`);
  writeFileSync(tmp, text, { mode: 0o600 });
  killPoint('entry-written');
  renameSync(tmp, join(dir, name));
}

/** Starts the background sender unless one runs or was just started (also called by SessionStart and UserPromptSubmit). */
export function ensureSender(stateDir: string, clientPath: string): void {
  const now = Date.now();
  if (fresh(join(stateDir, SENDER_LOCK), now, SENDER_STALE_MS)) return;
  const marker = join(stateDir, SENDER_SPAWNED);
  if (fresh(marker, now, SPAWN_GRACE_MS)) return;
  try {
    writeFileSync(marker, String(process.pid), { mode: 0o600 });
    // Only when none runs (once per idle period): node:child_process is not loaded on the common path.
    const { spawn } = process.getBuiltinModule('node:child_process');
    // Detached (its own session, so the agent ending this hook's process group leaves it alone), no stdio
    // (the agent waits for the hook's pipes to close), in the state dir (keeps no project folder busy).
    const child = spawn(process.execPath, [clientPath, 'sender'], {
      detached: true,
      stdio: 'ignore',
      cwd: stateDir,
      windowsHide: true,
    });
    child.on('error', () => {});
    child.unref();
  } catch {
    // the entry is safe in the inbox: the next synchronous hook or `cairn flush` sends it
  }
}

function fresh(path: string, now: number, ms: number): boolean {
  try {
    return now - statSync(path).mtimeMs < ms;
  } catch {
    return false;
  }
}

function agentOf(args: readonly string[]): string {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--agent') return args[i + 1] ?? '';
    if (args[i]!.startsWith('--agent=')) return args[i]!.slice('--agent='.length);
  }
  return 'claude-code';
}

/** All of fd 0 with read(2); a non-blocking pipe is waited on in 1 ms steps (up to 5 s); null on failure. */
function readStdin(): string | null {
  const chunks: Buffer[] = [];
  try {
    if (fstatSync(0).isCharacterDevice()) return '';
  } catch {
    return '';
  }
  const buf = Buffer.allocUnsafe(65_536);
  let waited = 0;
  for (;;) {
    let n: number;
    try {
      n = readSync(0, buf, 0, buf.length, null);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EOF') break;
      if ((code === 'EAGAIN' || code === 'EWOULDBLOCK') && waited < 5_000) {
        Atomics.wait(sleeper, 0, 0, 1);
        waited++;
        continue;
      }
      return null;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  return Buffer.concat(chunks).toString('utf8');
}
