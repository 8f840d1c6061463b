// Claude Code: where its settings live, cairn's hooks and MCP server in them, and the plugin's files, all
// derived from HOOK_PLAN so the plugin and `cairn install` cannot drift apart.
import { existsSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import {
  addOurEnv,
  addOurHooks,
  addOurStatusLine,
  HOOK_PLAN,
  removeOurEnv,
  removeOurHooks,
  removeOurStatusLine,
  type Settings,
} from './settings-merge';
import type { Io } from '../io';
import { commandFiles, SKILL_NAME, skillFile } from './claude-commands';
import { jsonEdit, type FileEdit } from './file-edit';
import { NONCE_ENV } from '../hook-door';

export const MCP_NAME = 'cairn';

/** Claude Code's config folder: $CLAUDE_CONFIG_DIR when set, else ~/.claude. */
export const claudeConfigDir = (env: Io['env'], home: string): string =>
  env.CLAUDE_CONFIG_DIR?.trim() || join(home, '.claude');

/** Claude Code's own state file (user MCP servers, per-project local servers): $CLAUDE_CONFIG_DIR/.claude.json or ~/.claude.json. */
export const claudeStatePath = (env: Io['env'], home: string): string =>
  join(env.CLAUDE_CONFIG_DIR?.trim() || home, '.claude.json');

/** The MCP server entry: the token stays in cairn's config; Claude Code asks the client for the header on each connect. */
export function mcpServerEntry(url: string, clientPath: string): Settings {
  return { type: 'http', url: `${url}/mcp`, headersHelper: `node "${clientPath.replace(/"/g, '\\"')}" mcp-headers` };
}

const isObject = (v: unknown): v is Settings => !!v && typeof v === 'object' && !Array.isArray(v);
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** `s` with `entry` as mcpServers.cairn under the object at `at` (created as needed); null entry removes it. */
function withMcp(s: Settings, at: string[], entry: Settings | null): Settings {
  const next = clone(s);
  const chain: Settings[] = [next];
  for (const key of at) {
    const parent = chain[chain.length - 1]!;
    if (!isObject(parent[key])) {
      if (!entry) return next;
      parent[key] = {};
    }
    chain.push(parent[key] as Settings);
  }
  const holder = chain[chain.length - 1]!;
  const servers = isObject(holder.mcpServers) ? holder.mcpServers : {};
  if (entry) servers[MCP_NAME] = entry;
  else delete servers[MCP_NAME];
  if (Object.keys(servers).length) holder.mcpServers = servers;
  else delete holder.mcpServers;
  // Drop the containers this removal emptied (a project entry cairn created), never others.
  if (!entry) {
    for (let i = at.length - 1; i >= 0; i--) {
      if (Object.keys(chain[i + 1]!).length) break;
      delete chain[i]![at[i]!];
    }
  }
  return next;
}

export interface ClaudeTargets {
  /** The settings file the hooks go into. */
  settings: string;
  /** The file and the object path inside it where the MCP server goes when the `claude` CLI is not there. */
  mcpFile: string;
  mcpAt: string[];
  /** `claude mcp` scope for the same registration. */
  scope: 'user' | 'local';
  /** The folder the settings file must stay inside (a project install: the project, so a linked `.claude` is refused). */
  settingsRoot?: string;
}

/**
 * With --project, only files that stay on this machine: the hooks (absolute client paths) go to
 * .claude/settings.local.json, which Claude Code keeps out of git, and the MCP server to the project's
 * local scope in Claude Code's state file, not the committed .mcp.json.
 */
export function claudeTargets(io: Io, home: string, project: boolean, settingsOverride?: string): ClaudeTargets {
  const settings = settingsOverride
    ? resolve(io.cwd, settingsOverride)
    : project
      ? join(io.cwd, '.claude', 'settings.local.json')
      : join(claudeConfigDir(io.env, home), 'settings.json');
  const settingsRoot = project && !settingsOverride ? io.cwd : undefined;
  return {
    settings,
    mcpFile: claudeStatePath(io.env, home),
    mcpAt: project ? ['projects', io.cwd] : [],
    scope: project ? 'local' : 'user',
    settingsRoot,
  };
}

/**
 * The hooks (exec form: no shell) and the status line (a shell command, so it needs the client's absolute path
 * too). With `http`, the quick events are HTTP hooks to the sender's door and settings `env` carries the
 * machine's secret their header reads; without, they stay command hooks (CAIRN_SENDER=off).
 */
export function claudeHookEdit(
  t: ClaudeTargets,
  clientPath: string,
  opts: { statusLine?: boolean; http?: { port: number; nonce: string } | null } = {},
): FileEdit {
  const withStatus = opts.statusLine ?? true;
  const http = opts.http ?? null;
  const hooked = (s: Settings) => {
    const h = addOurHooks(s, clientPath, { execForm: true, httpPort: http?.port });
    return http ? addOurEnv(h, http.nonce) : removeOurEnv(h);
  };
  const edit = jsonEdit(
    t.settings,
    (s) => (withStatus ? addOurStatusLine(hooked(s), clientPath) : removeOurStatusLine(hooked(s))),
    (s) => removeOurEnv(removeOurStatusLine(removeOurHooks(s))),
  );
  // The nonce makes the settings file a secret: another account that read it could post events as this user.
  return { ...edit, root: t.settingsRoot, secret: (text) => text.includes(NONCE_ENV) };
}

/**
 * The same commands and skill for `cairn install` users, at user scope (they name the client's absolute path,
 * so never in a project's committed .claude/): ~/.claude/commands/cairn/*.md (/cairn:status …) and
 * ~/.claude/skills/cairn-memory/SKILL.md. Whole files: created, and deleted again only while they are exactly
 * what cairn wrote (a file the user changed stays); a file of the user's own at that path is left as it is.
 */
export function claudeCommandEdits(env: Io['env'], home: string, clientPath: string): FileEdit[] {
  const root = claudeConfigDir(env, home);
  const files: Array<[string, string]> = Object.entries(commandFiles(clientPath)).map(([name, body]) => [
    join(root, 'commands', 'cairn', name),
    body,
  ]);
  files.push([join(root, 'skills', SKILL_NAME, 'SKILL.md'), skillFile()]);
  return files.map(([path, body]) => ({
    path,
    root,
    add: (before) => (before !== null && before !== '' && !isOurCommandFile(before) ? before : body),
    remove: (before) => (before === body || isOurCommandFile(before) ? '' : before),
    same: (a, b) => a === b,
    empty: (text) => text === '',
  }));
}

/** A command or skill file cairn wrote, for any client path (an install moved since still comes out). */
const isOurCommandFile = (text: string): boolean =>
  /^---\nname: cairn-memory\n/.test(text) ||
  (/^---\ndescription: /.test(text) &&
    /cairn(?:\.[cm]?js)?" (?:status|pause|resume|capture|forget|prime|handoff|promote)\b|the cairn `remember` tool/.test(
      text,
    ));

/** The folders the command and skill files live in: removed on uninstall when that left them empty. */
export const claudeCommandDirs = (env: Io['env'], home: string): string[] => {
  const root = claudeConfigDir(env, home);
  return [join(root, 'commands', 'cairn'), join(root, 'skills', SKILL_NAME)];
};

export function claudeMcpEdit(t: ClaudeTargets, entry: Settings): FileEdit {
  return jsonEdit(
    t.mcpFile,
    (s) => withMcp(s, t.mcpAt, entry),
    (s) => withMcp(s, t.mcpAt, null),
  );
}

/** The `claude` executable on PATH, if any. */
export function findClaudeCli(env: Io['env']): string | null {
  const names = process.platform === 'win32' ? ['claude.exe', 'claude.cmd'] : ['claude'];
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    for (const n of names) if (existsSync(join(dir, n))) return join(dir, n);
  }
  return null;
}

// ── The plugin (plugin/hooks/hooks.json, plugin/.mcp.json), generated from the same plan ──

const PLUGIN_CLIENT = '${CLAUDE_PLUGIN_ROOT}/scripts/cairn.cjs';

/** plugin/hooks/hooks.json: exec form (no shell), so the plugin path needs no quoting on any platform. */
export function pluginHooksJson(): Settings {
  const hooks: Settings = {};
  for (const p of HOOK_PLAN) {
    const handler: Settings = {
      type: 'command',
      command: 'node',
      args: [PLUGIN_CLIENT, 'hook', p.event],
      timeout: p.timeout,
    };
    if (p.async) handler.async = true;
    const group: Settings = p.matcher ? { matcher: p.matcher, hooks: [handler] } : { hooks: [handler] };
    hooks[p.claudeEvent] = [...((hooks[p.claudeEvent] as Settings[] | undefined) ?? []), group];
  }
  return { description: 'cairn: capture tool calls and prompts, inject project memory', hooks };
}

/** plugin/.mcp.json: the plugin's user options (url, token) fill in the server entry. */
export function pluginMcpJson(): Settings {
  return {
    mcpServers: {
      [MCP_NAME]: {
        type: 'http',
        url: '${user_config.url}/mcp',
        headers: { Authorization: 'Bearer ${user_config.token}' },
      },
    },
  };
}

/** Every generated plugin file, by path relative to the repository root. */
export function pluginFiles(): Record<string, string> {
  const text = (v: Settings) => `${JSON.stringify(v, null, 2)}\n`;
  const files: Record<string, string> = {
    'plugin/hooks/hooks.json': text(pluginHooksJson()),
    'plugin/.mcp.json': text(pluginMcpJson()),
  };
  for (const [name, body] of Object.entries(commandFiles(PLUGIN_CLIENT))) files[`plugin/commands/${name}`] = body;
  files[`plugin/skills/${SKILL_NAME}/SKILL.md`] = skillFile();
  return files;
}
