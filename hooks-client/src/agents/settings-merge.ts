// Pure: adding cairn's hooks to a Claude Code settings object and taking them out again, leaving others alone.
import type { HookEvent } from '../hook-events';
import { HOOK_ENV_VARS, HOOK_PATH, hookHeaders, NONCE_ENV } from '../hook-door';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type Settings = { [k: string]: Json };

interface Handler {
  type: string;
  command?: string;
  args?: string[];
  url?: string;
  headers?: Record<string, string>;
  allowedEnvVars?: string[];
  timeout?: number;
  async?: boolean;
}
interface Group {
  matcher?: string;
  hooks: Handler[];
}

/** One handler cairn adds: the agent's event name, cairn's event, matcher, timeout (seconds) and async flag. */
export interface PlannedHook {
  claudeEvent: string;
  event: HookEvent;
  matcher?: string;
  timeout: number;
  async?: boolean;
  /** Claude Code may POST this one to the sender's HTTP door instead of starting a process (sender/listen.ts). */
  http?: boolean;
}

export const HOOK_PLAN: PlannedHook[] = [
  { claudeEvent: 'SessionStart', event: 'session-start', matcher: 'startup|resume|clear|compact|fork', timeout: 10 },
  { claudeEvent: 'UserPromptSubmit', event: 'user-prompt-submit', timeout: 10 },
  { claudeEvent: 'PreToolUse', event: 'pre-tool-use', matcher: 'Read', timeout: 5 },
  // Fire-and-forget: Claude Code does not wait for these, so recording never slows the agent.
  { claudeEvent: 'PostToolUse', event: 'post-tool-use', matcher: '*', timeout: 10, async: true, http: true },
  // Claude Code reports a failed call (e.g. a command exiting non-zero) only through this event.
  {
    claudeEvent: 'PostToolUseFailure',
    event: 'post-tool-use-failure',
    matcher: '*',
    timeout: 10,
    async: true,
    http: true,
  },
  // Not async: the turn's summary is its most valuable event, and `claude -p` ends async hooks when it exits
  // right after its last answer. Claude Code waits for this one (~40 ms; the hook's budget caps it at 1.5 s).
  { claudeEvent: 'Stop', event: 'stop', timeout: 10 },
  // Before Claude Code compacts: what waits goes to the server, so the "so far" block after it is complete.
  { claudeEvent: 'PreCompact', event: 'pre-compact', timeout: 10 },
  { claudeEvent: 'SessionEnd', event: 'session-end', timeout: 5 },
];

// The installed copy is cairn.cjs; older installs and --client may name cairn.mjs or cairn.js.
const OURS =
  /cairn(?:\.[cm]?js)?["']?\s+hook\s+(?:session-start|user-prompt-submit|pre-tool-use|post-tool-use|post-tool-use-failure|stop|pre-compact|session-end)\b/;

const OUR_URL = new RegExp(`^http://(?:127\\.0\\.0\\.1|localhost):\\d+${HOOK_PATH.replace(/\//g, '\\/')}`);

/** A handler cairn wrote: shell form (`node "…cairn.cjs" hook x`), exec form (command + args) or the HTTP door. */
export function isOurHandler(h: unknown): boolean {
  if (!h || typeof h !== 'object') return false;
  const { command, args, url } = h as Handler;
  if (typeof url === 'string' && OUR_URL.test(url)) return true;
  if (typeof command !== 'string') return false;
  const line = Array.isArray(args) ? [command, ...args.map(String)].join(' ') : command;
  return OURS.test(line);
}

/** Claude Code's HTTP hook for a quick event: a POST to the sender, the secret read from an allowed variable. */
export function httpHandler(port: number, event: HookEvent, timeout: number): Handler {
  return {
    type: 'http',
    url: `http://127.0.0.1:${port}${HOOK_PATH}${event}`,
    headers: hookHeaders(),
    allowedEnvVars: [...HOOK_ENV_VARS],
    timeout,
  };
}

/** settings `env` gains the sender's secret (Claude Code interpolates it into the HTTP hook's header). */
export function addOurEnv(settings: Settings, nonce: string): Settings {
  const next = clone(settings);
  const env = next.env && typeof next.env === 'object' && !Array.isArray(next.env) ? next.env : {};
  env[NONCE_ENV] = nonce;
  next.env = env;
  return next;
}

/** Takes the secret out again; `env` goes only when that emptied it. */
export function removeOurEnv(settings: Settings): Settings {
  const env = settings.env;
  if (!env || typeof env !== 'object' || Array.isArray(env) || !(NONCE_ENV in env)) return settings;
  const next = clone(settings);
  const nextEnv = next.env as Settings;
  delete nextEnv[NONCE_ENV];
  if (!Object.keys(nextEnv).length) delete next.env;
  return next;
}

/** The client path cairn's command hooks in `settings` run (exec form `node <client> hook …`), or null. */
function ourClientPath(settings: Settings): string | null {
  const hooks = settings.hooks;
  if (!hooks || typeof hooks !== 'object' || Array.isArray(hooks)) return null;
  for (const groups of Object.values(hooks)) {
    if (!isGroupList(groups)) continue;
    for (const g of groups) {
      for (const h of Array.isArray(g?.hooks) ? g.hooks : []) {
        if (!isOurHandler(h) || h.url) continue;
        if (Array.isArray(h.args) && typeof h.args[0] === 'string') return h.args[0];
      }
    }
  }
  return null;
}

/** Whether `settings` holds one of cairn's HTTP door handlers. */
export function hasOurDoor(settings: Settings): boolean {
  return JSON.stringify(settings.hooks ?? null).includes(HOOK_PATH);
}

/**
 * The door closed in a settings file: cairn's HTTP handlers become command hooks again (exec form, the client
 * its other hooks run) and the nonce leaves `env`. A file without a door handler is returned as it is.
 */
export function withoutDoor(settings: Settings): Settings {
  if (!hasOurDoor(settings)) return removeOurEnv(settings);
  const client = ourClientPath(settings);
  return removeOurEnv(client ? addOurHooks(settings, client, { execForm: true }) : removeOurHooks(settings));
}

/**
 * Another settings file that names the door, after `cairn install` re-issued it: its door handlers point at the
 * door's port and its `env` holds the new nonce. A file without the door's nonce is returned as it is.
 */
export function withDoorRenewed(settings: Settings, port: number, nonce: string): Settings {
  const env = settings.env;
  if (!env || typeof env !== 'object' || Array.isArray(env) || !(NONCE_ENV in env)) return settings;
  const next = addOurEnv(settings, nonce);
  const text = JSON.stringify(next.hooks ?? null).replace(
    /http:\/\/(?:127\.0\.0\.1|localhost):\d+\/cairn\/hook\//g,
    `http://127.0.0.1:${port}${HOOK_PATH}`,
  );
  if (next.hooks !== undefined) next.hooks = JSON.parse(text) as Json;
  return next;
}

/** The shell command the agent runs for one event (`--agent` for agents other than Claude Code). */
export function hookCommand(clientPath: string, event: HookEvent, agent?: string): string {
  return `node "${clientPath.replace(/"/g, '\\"')}" hook ${event}${agent ? ` --agent ${agent}` : ''}`;
}

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
const isGroupList = (v: unknown): v is Group[] => Array.isArray(v);

/** Removes cairn's handlers; groups, event lists and the hooks object are dropped only if that emptied them. */
export function removeOurHooks(settings: Settings): Settings {
  const next = clone(settings);
  const hooks = next.hooks;
  if (!hooks || typeof hooks !== 'object' || Array.isArray(hooks)) return next;
  for (const [event, groups] of Object.entries(hooks)) {
    if (!isGroupList(groups)) continue;
    const kept: Group[] = [];
    for (const g of groups) {
      if (!g || typeof g !== 'object' || !Array.isArray(g.hooks)) {
        kept.push(g);
        continue;
      }
      const handlers = g.hooks.filter((h) => !isOurHandler(h));
      if (handlers.length === g.hooks.length) kept.push(g);
      else if (handlers.length) kept.push({ ...g, hooks: handlers });
    }
    if (kept.length) (hooks as Record<string, Json>)[event] = kept as unknown as Json;
    else delete (hooks as Record<string, Json>)[event];
  }
  if (!Object.keys(hooks).length) delete next.hooks;
  return next;
}

/**
 * Adds cairn's hooks (replacing any earlier cairn entries), keeping every other hook where it was. Other
 * agents with the same settings layout pass their own plan, their name, and their timeout unit.
 */
export function addOurHooks(
  settings: Settings,
  clientPath: string,
  opts: { plan?: PlannedHook[]; agent?: string; timeoutUnitMs?: number; execForm?: boolean; httpPort?: number } = {},
): Settings {
  const next = removeOurHooks(settings);
  const hooks = (
    next.hooks && typeof next.hooks === 'object' && !Array.isArray(next.hooks) ? next.hooks : {}
  ) as Record<string, Json>;
  for (const p of opts.plan ?? HOOK_PLAN) {
    const timeout = opts.timeoutUnitMs ? p.timeout * (1000 / opts.timeoutUnitMs) : p.timeout;
    // Exec form (no shell between the agent and node) where the agent has it: the path needs no quoting.
    const handler: Handler = opts.execForm
      ? { type: 'command', command: 'node', args: [clientPath, 'hook', p.event], timeout }
      : { type: 'command', command: hookCommand(clientPath, p.event, opts.agent), timeout };
    if (p.async) handler.async = true;
    const h = p.http && opts.httpPort ? httpHandler(opts.httpPort, p.event, 5) : handler;
    const group: Group = p.matcher ? { matcher: p.matcher, hooks: [h] } : { hooks: [h] };
    const list = Array.isArray(hooks[p.claudeEvent]) ? (hooks[p.claudeEvent] as Json[]) : [];
    hooks[p.claudeEvent] = [...list, group as unknown as Json];
  }
  next.hooks = hooks;
  return next;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  return v;
}

/** Indentation of an existing JSON text (so a rewrite looks like the user's file), default two spaces. */
export function detectIndent(text: string): string | number {
  const m = /^[\t ]+(?=")/m.exec(text);
  return m ? m[0] : 2;
}

// ── The status line (settings `statusLine`): one per settings file, so a user's own is wrapped, not replaced ──

const OUR_STATUS = /cairn(?:\.[cm]?js)?["']?\s+statusline\b/;
/** How often Claude Code re-runs it between events, in seconds: the remembered count moves as the observer works. */
export const STATUS_REFRESH_S = 15;

const isObj = (v: unknown): v is Settings => !!v && typeof v === 'object' && !Array.isArray(v);
const isOurStatus = (v: unknown): boolean => isObj(v) && typeof v.command === 'string' && OUR_STATUS.test(v.command);

/** The user's status line that ours wraps, carried inside our command (base64url JSON), or null. */
function wrappedOf(ours: Settings): Settings | null {
  const m = /\s--wrap\s+([A-Za-z0-9_-]+)/.exec(String(ours.command));
  if (!m) return null;
  try {
    const v: unknown = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8'));
    return isObj(v) ? v : null;
  } catch {
    return null;
  }
}

/** Takes our status line out: the user's own (which ours wrapped) comes back as it was. */
export function removeOurStatusLine(settings: Settings): Settings {
  if (!isOurStatus(settings.statusLine)) return settings;
  const next = clone(settings);
  const theirs = wrappedOf(next.statusLine as Settings);
  if (theirs) next.statusLine = theirs;
  else delete next.statusLine;
  return next;
}

/**
 * Sets our status line. A user's own `command` status line is kept inside ours (`--wrap`): ours runs it with
 * the same input and prints its line first. Their padding and refresh interval stay in effect.
 */
export function addOurStatusLine(settings: Settings, clientPath: string): Settings {
  const next = removeOurStatusLine(settings);
  const theirs =
    isObj(next.statusLine) && next.statusLine.type === 'command' && typeof next.statusLine.command === 'string'
      ? next.statusLine
      : null;
  if (isObj(next.statusLine) && !theirs) return next; // a kind of status line cairn does not know: left alone
  let command = `node "${clientPath.replace(/"/g, '\\"')}" statusline`;
  if (theirs) command += ` --wrap ${Buffer.from(JSON.stringify(theirs)).toString('base64url')}`;
  const line: Settings = { type: 'command', command };
  if (theirs && typeof theirs.padding === 'number') line.padding = theirs.padding;
  const interval =
    theirs && typeof theirs.refreshInterval === 'number'
      ? Math.min(theirs.refreshInterval, STATUS_REFRESH_S)
      : STATUS_REFRESH_S;
  line.refreshInterval = interval;
  if (theirs && theirs.hideVimModeIndicator !== undefined) line.hideVimModeIndicator = theirs.hideVimModeIndicator;
  next.statusLine = line;
  return next;
}
