// `cairn login`, `cairn status`, `cairn flush`, `cairn search`: the user's commands around the hooks.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  loadConfig,
  loggedInConfig,
  pathsFor,
  readConfigFile,
  writeConfigFile,
  type Config,
  type Paths,
} from '../config';
import { drainInbox, inboxEntries } from '../hook/drain';
import { SENDER_LOG } from '../inbox/entry';
import { readDoor } from '../door/state';
import type { Io } from '../io';
import { call, errorText, Unreachable } from '../net/http';
import { projectKeyFor } from '../project/project-key';
import { replay, type DeliveryContext } from '../spool/deliver';
import { Spool } from '../spool/spool';
import { runningSender } from '../sender/sender-lock';
import { readState } from '../state';
import { jsonText } from '../util/terminal';
import { VERSION } from '../version';

export function deliveryFor(io: Io, config: Config, paths: Paths): DeliveryContext {
  return {
    url: config.url,
    token: config.token,
    device: config.device,
    stateDir: paths.stateDir,
    now: io.now,
    spool: new Spool(paths.stateDir, { maxEvents: config.spoolMaxEvents, maxBytes: config.spoolMaxBytes }),
  };
}

export async function login(args: string[], io: Io): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { url: { type: 'string' }, token: { type: 'string' }, device: { type: 'string' } },
  });
  if (!values.url || !values.token) {
    io.err('usage: cairn login --url https://your-worker.example --token <token> [--device <name>]\n');
    return 2;
  }
  let url: URL;
  try {
    url = new URL(values.url);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('scheme');
  } catch {
    io.err(`cairn: "${values.url}" is not an http(s) URL.\n`);
    return 2;
  }
  const paths = pathsFor(io.env);
  const base = url.toString().replace(/\/+$/, '');
  const file = { ...readConfigFile(paths), url: base, token: values.token.trim() };
  if (values.device) file.device = values.device;
  writeConfigFile(paths, file);
  io.out(`cairn: saved ${paths.configFile}\n`);
  const check = await checkToken(base, file.token, file.device ?? null);
  if (check.refused) {
    // Saved anyway (a re-login fixes it), but `login && install` must not go on as if it worked.
    io.err(`cairn: ${check.message}\n`);
    return 1;
  }
  io.out(`cairn: ${check.message}\n`);
  return 0;
}

/** `refused`: the server answered and turned the token down (as opposed to being unreachable). */
async function checkToken(
  url: string,
  token: string | null,
  device: string | null,
): Promise<{ ok: boolean; refused?: boolean; message: string }> {
  try {
    const r = await call(url, '/api/projects', { token, device, timeoutMs: 5_000 });
    if (r.status === 200) return { ok: true, message: `server reachable at ${url}, token valid` };
    if (r.status === 403)
      return { ok: true, message: `server reachable at ${url}, token valid (no read scope: recall disabled)` };
    return {
      ok: false,
      refused: r.status === 401,
      message: `server reachable at ${url}, but the token was refused (${errorText(r)})`,
    };
  } catch (e) {
    return {
      ok: false,
      message: `server not reachable at ${url} (${e instanceof Unreachable ? e.reason : String(e)}); events will be kept locally until it is`,
    };
  }
}

/** Which observer the team's events get: the configured model, or the heuristic fallback while the budget is spent. */
async function observerLine(url: string, token: string | null, device: string | null): Promise<string | null> {
  try {
    const r = await call(url, '/api/observer/budget', { token, device, timeoutMs: 3_000 });
    if (r.status !== 200) return null;
    const body = JSON.parse(r.text) as {
      observer?: { provider?: string; model?: string | null };
      budget?: { notice?: string | null } | null;
    };
    if (body.budget?.notice) return body.budget.notice;
    const o = body.observer;
    return o?.provider ? `${o.provider}${o.model ? ` (${o.model})` : ''}` : null;
  } catch {
    return null;
  }
}

/**
 * Whether the team's memory is being made: paused (the observer's key refused…), delayed, or behind, in the
 * server's own words (GET /api/observer/state); null from a server too old to say.
 */
async function memoryLine(url: string, token: string | null, device: string | null): Promise<string | null> {
  try {
    const r = await call(url, '/api/observer/state', { token, device, timeoutMs: 3_000 });
    if (r.status !== 200) return null;
    const body = JSON.parse(r.text) as { state?: string; notice?: string | null; pending?: number };
    if (body.notice) return body.notice;
    return body.state === 'ok'
      ? `ok${body.pending ? ` (${body.pending} events being observed)` : ''}`
      : (body.state ?? null);
  } catch {
    return null;
  }
}

const kb = (n: number) =>
  n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;

export async function status(_args: string[], io: Io): Promise<number> {
  const paths = pathsFor(io.env);
  const config = loadConfig(io.env, paths);
  const spool = new Spool(paths.stateDir, { maxEvents: config.spoolMaxEvents, maxBytes: config.spoolMaxBytes });
  const stats = spool.stats();
  const state = readState(paths.stateDir);
  const lines = [`cairn ${VERSION}`];
  if (!config.url || !config.token) lines.push('server:  not configured (run: cairn login --url … --token …)');
  else {
    const check = await checkToken(config.url, config.token, config.device);
    lines.push(`server:  ${check.message}`);
    if (check.ok) {
      const [observer, memory] = await Promise.all([
        observerLine(config.url, config.token, config.device),
        memoryLine(config.url, config.token, config.device),
      ]);
      if (observer) lines.push(`observer: ${observer}`);
      if (memory) lines.push(`memory:  ${memory}`);
    }
    try {
      const r = await call(config.url, '/install/cairn.mjs', { method: 'HEAD', timeoutMs: 3_000 });
      const served = r.headers['x-cairn-client-version'];
      if (typeof served === 'string' && served !== VERSION)
        lines.push(`update:  the server offers client ${served} (this is ${VERSION}): ${config.url}/install/cairn.mjs`);
    } catch {
      // reachability was reported above
    }
  }
  lines.push(`project: ${projectKeyFor(io.cwd, paths.stateDir, io.now())} (for ${io.cwd})`);
  const pct = Math.round(stats.fill * 100);
  lines.push(
    `spool:   ${stats.pendingEvents} events waiting, ${kb(stats.pendingBytes)} (${pct}% of the limit: ${config.spoolMaxEvents} events / ${kb(config.spoolMaxBytes)})`,
  );
  if (stats.fill >= 0.8)
    lines.push(
      `WARNING: the spool is ${pct}% full; events will be dropped when it is full. Run \`cairn flush\` once the server is reachable.`,
    );
  if (stats.dropped) lines.push(`WARNING: ${stats.dropped} events were dropped because the spool was full.`);
  const inbox = inboxEntries(paths.stateDir).length;
  if (inbox) lines.push(`inbox:   ${inbox} tool events recorded by hooks, not yet in the spool`);
  const running = runningSender(paths.stateDir, io.now());
  lines.push(
    `sender:  ${running ? `running (pid ${running.pid}; stop it with: cairn sender --stop)` : 'not running (hooks start it when they record a tool call)'}; log ${join(paths.stateDir, SENDER_LOG)}`,
  );
  const door = doorLine(paths.stateDir, io.env);
  if (door) lines.push(door);
  lines.push(
    `last error: ${state.lastError ? `${new Date(state.lastError.at).toISOString()} ${state.lastError.message}` : 'none'}`,
  );
  io.out(`${lines.join('\n')}\n`);
  return 0;
}

function jsonOrText(text: string): string {
  try {
    return jsonText(JSON.parse(text) as unknown, 2);
  } catch {
    return text;
  }
}

/** The HTTP hook door: where it listens, or that it was closed and why (door/close.ts). */
function doorLine(stateDir: string, env: Io['env']): string | null {
  const door = readDoor(stateDir, env);
  if (!door) return null;
  if (door.taken)
    return `door:    CLOSED since ${new Date(door.taken.at).toISOString()}: ${door.taken.detail}. Its settings were given command hooks again; sessions started before keep posting there until restarted (restart Claude Code). Run \`cairn install\` to open it on a new random port with a new secret.`;
  if (door.legacy)
    return `door:    127.0.0.1:${door.port} (an older install: a port derived from your uid and a secret never re-issued; run \`cairn install\` again for a random port and a new secret)`;
  return `door:    127.0.0.1:${door.port} (Claude Code's PostToolUse posts there; secret issued ${new Date(door.issuedAt).toISOString()}, ${door.settings.length} settings file${door.settings.length === 1 ? '' : 's'})`;
}

export async function flush(args: string[], io: Io): Promise<number> {
  const { values } = parseArgs({ args, options: { timeout: { type: 'string' } } });
  const paths = pathsFor(io.env);
  const config = loadConfig(io.env, paths);
  const delivery = deliveryFor(io, config, paths);
  const seconds = Number(values.timeout ?? 120);
  // What quick hooks left in the inbox first (redacted on the way into the spool), waiting for the sender if
  // it is draining right now.
  await drainInbox(paths.stateDir, io.env, io.now() + 60_000, 3_000);
  const before = delivery.spool.stats().pendingEvents;
  // A hook may be replaying right now (for one round trip): wait for it rather than give up at once.
  const report = await replay(delivery, io.now() + (Number.isFinite(seconds) ? seconds : 120) * 1000, 3_000);
  if (report.busy) {
    io.out('cairn: another cairn process is replaying the spool right now; try again in a moment.\n');
    return 1;
  }
  io.out(
    `cairn: ${report.delivered} of ${before} events delivered${report.rejected ? `, ${report.rejected} refused by the server (see ${delivery.spool.deadFile})` : ''}, ${report.remaining} waiting.\n`,
  );
  if (report.retryReason && report.remaining) io.out(`cairn: stopped: ${report.retryReason}\n`);
  return report.remaining ? 1 : 0;
}

export async function search(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      all: { type: 'boolean' },
      project: { type: 'string' },
      platform: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const q = positionals.join(' ').trim();
  if (!q) {
    io.err('usage: cairn search <query> [--all] [--project <key>] [--platform <agent>] [--limit N] [--json]\n');
    return 2;
  }
  const paths = pathsFor(io.env);
  const config = loggedInConfig(io, paths);
  if (!config) return 1;
  const params = new URLSearchParams({ q });
  if (!values.all) params.set('project', values.project ?? projectKeyFor(io.cwd, paths.stateDir, io.now()));
  if (values.platform) params.set('platform', values.platform);
  if (values.limit) params.set('limit', values.limit);
  if (!values.json) params.set('format', 'text');
  try {
    const r = await call(config.url, `/api/search?${params.toString()}`, {
      token: config.token,
      device: config.device,
      timeoutMs: 15_000,
    });
    if (r.status !== 200) {
      io.err(`cairn: search failed: ${errorText(r)}\n`);
      return 1;
    }
    // --json: the answer re-encoded, so what a terminal must not see is escaped, not dropped (the values stay).
    const text = values.json ? jsonOrText(r.text) : r.text;
    io.out(text.endsWith('\n') ? text : `${text}\n`);
    return 0;
  } catch (e) {
    io.err(`cairn: server not reachable (${e instanceof Unreachable ? e.reason : String(e)})\n`);
    return 1;
  }
}
