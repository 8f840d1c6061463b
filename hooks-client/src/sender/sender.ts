// `cairn sender`: the per-machine background process that quick hooks start when none runs. It drains the
// inbox into the spool (redaction and the private-prompt check happen there) and sends the spool over one
// kept-alive connection as events arrive, woken by fs.watch on the inbox (and a slow poll, in case a file
// system does not report changes). It leaves after an idle period; `cairn sender --stop` ends it sooner.
// It also listens on 127.0.0.1 for Claude Code's HTTP hooks (sender/listen.ts): a tool call then costs the
// agent one local POST, not a process. While that door is open it stays longer, since a hook that finds no
// sender is only recovered at the turn's end (Stop's transcript reconciliation).
import { appendFileSync, mkdirSync, renameSync, statSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, pathsFor } from '../config';
import { drainInbox, inboxDir, inboxEntries } from '../hook/drain';
import { prunePromptLogs } from '../hook/prompt-log';
import { pruneSeenCalls } from '../hook/seen-calls';
import { SENDER_HEARTBEAT_MS, SENDER_LOG } from '../inbox/entry';
import type { Io } from '../io';
import { replay } from '../spool/deliver';
import { Spool } from '../spool/spool';
import { openHookDoor, type HookDoor } from './listen';
import { stopSender, takeSenderLock } from './sender-lock';

const DEFAULT_IDLE_MS = 60_000;
/** Once HTTP hooks use the door: SessionStart and each prompt start a sender, but a long tool call must find it. */
const DOOR_IDLE_MS = 30 * 60_000;
/** Safety net under fs.watch: the inbox is listed at least this often. */
const POLL_MS = 2_000;
const MAX_BACKOFF_MS = 30_000;
const LOG_MAX_BYTES = 1_000_000;

export async function sender(args: string[], io: Io): Promise<number> {
  const paths = pathsFor(io.env);
  if (args[0] === '--stop') {
    const pid = stopSender(paths.stateDir, io.now());
    io.out(
      pid
        ? `cairn: asked the sender (pid ${pid}) to stop; what it has not sent stays in the spool.\n`
        : 'cairn: no sender is running.\n',
    );
    return 0;
  }
  const lock = takeSenderLock(paths.stateDir);
  // Another sender runs: nothing to do (two hooks started one at the same moment).
  if (!lock) return 0;
  const log = logger(paths.stateDir);
  let wake: (() => void) | null = null;
  let woken = false;
  const poke = () => {
    woken = true;
    wake?.();
  };
  let door: HookDoor | null = null;
  // Lingers only once Claude Code's HTTP hooks use it: a sender of command hooks alone leaves as before.
  let doorUsed = false;
  try {
    const opened = await openHookDoor(
      paths.stateDir,
      io.env,
      () => {
        doorUsed = true;
        poke();
      },
      log,
    );
    if ('port' in opened) door = opened;
    else if (opened.why === 'ours') log('the HTTP hook door is held by another sender of this account');
  } catch (e) {
    log(`no HTTP hook door: ${e instanceof Error ? e.message : String(e)}`);
  }
  const setIdle = positive(io.env.CAIRN_SENDER_IDLE_MS);
  const idleFor = () => setIdle ?? (doorUsed ? DOOR_IDLE_MS : DEFAULT_IDLE_MS);
  log(
    `started (pid ${process.pid}, ${door ? `hooks on 127.0.0.1:${door.port}, ` : ''}leaves after ${idleFor()} ms idle${door && !setIdle ? `, ${DOOR_IDLE_MS} once a hook came through the door` : ''})`,
  );
  prunePromptLogs(paths.stateDir, io.now());
  pruneSeenCalls(paths.stateDir, io.now());
  let stopping = false;
  const stop = (why: string) => {
    if (stopping) return;
    stopping = true;
    log(why);
    poke();
  };
  process.once('SIGTERM', () => stop('stopped (SIGTERM)'));
  process.once('SIGINT', () => stop('stopped (SIGINT)'));
  const heartbeat = setInterval(() => {
    if (!lock.beat()) stop('another sender took over the lock');
  }, SENDER_HEARTBEAT_MS);
  let watcher: FSWatcher | null = null;
  try {
    mkdirSync(inboxDir(paths.stateDir), { recursive: true, mode: 0o700 });
    watcher = watch(inboxDir(paths.stateDir), poke);
    watcher.on('error', () => {});
  } catch (e) {
    log(`fs.watch unavailable (${String(e)}): polling every ${POLL_MS} ms`);
  }

  let lastWork = io.now();
  let backoff = 0;
  try {
    for (;;) {
      woken = false;
      let worked = { progress: false, failing: true };
      try {
        worked = await pass(io, paths.stateDir, log);
      } catch (e) {
        // A bug or a file system refusing (permissions, disk full): back off and try again, never crash-loop.
        log(`round failed: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
      }
      if (worked.progress) lastWork = io.now();
      backoff = worked.failing ? Math.min(MAX_BACKOFF_MS, Math.max(1_000, backoff * 2)) : 0;
      if (stopping) break;
      const idle = io.now() - lastWork;
      const idleMs = idleFor();
      if (!woken && idle >= idleMs && !inboxEntries(paths.stateDir).length) {
        lock.release();
        // A quick hook that wrote its entry before this point saw the lock and started no sender: look once
        // more, after letting go (see inbox/quick.ts); a hook after this point starts a new sender itself.
        if (!inboxEntries(paths.stateDir).length) break;
        if (!takeSenderLock(paths.stateDir)) break;
        continue;
      }
      const wait = woken ? 0 : Math.min(backoff || POLL_MS, Math.max(50, idleMs - idle));
      if (wait > 0)
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, wait);
          wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
      wake = null;
    }
  } finally {
    clearInterval(heartbeat);
    watcher?.close();
    await door?.close();
    lock.release();
  }
  log('left');
  return 0;
}

/** One round: the inbox into the spool, then the spool to the server while it takes it. */
async function pass(
  io: Io,
  stateDir: string,
  log: (line: string) => void,
): Promise<{ progress: boolean; failing: boolean }> {
  const drained = await drainInbox(stateDir, io.env, io.now() + 10_000, 1_000);
  // Read each round: a new login (token, URL) applies without restarting.
  const config = loadConfig(io.env, pathsFor(io.env));
  const spool = new Spool(stateDir, { maxEvents: config.spoolMaxEvents, maxBytes: config.spoolMaxBytes });
  if (!spool.hasPending()) return { progress: drained.drained > 0, failing: false };
  const delivery = {
    url: config.url,
    token: config.token,
    device: config.device,
    spool,
    stateDir,
    now: io.now,
    keepAlive: true,
  };
  const r = await replay(delivery, io.now() + 30_000, 1_000);
  if (r.retryReason && r.remaining) log(`${r.remaining} events wait: ${r.retryReason}`);
  return {
    progress: drained.drained > 0 || r.delivered + r.rejected > 0,
    failing: Boolean(r.retryReason && r.remaining),
  };
}

/** `sender.log` in the state dir: one line per start, stop and delivery problem; kept under ~1 MB. */
function logger(stateDir: string): (line: string) => void {
  const file = join(stateDir, SENDER_LOG);
  return (line) => {
    try {
      if (statSize(file) > LOG_MAX_BYTES) renameSync(file, `${file}.old`);
      appendFileSync(file, `${new Date().toISOString()} ${process.pid} ${line}\n`, { mode: 0o600 });
    } catch {
      // the log is informational
    }
  };
}

function statSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

function positive(v: string | undefined): number | undefined {
  const n = v === undefined ? NaN : Number(v);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}
