// Where cairn keeps its files and what the user configured: env vars beat the config file beat defaults.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { homeOf, type Io } from './io';
import { ensurePrivateDir, PRIVATE_FILE, safeWriteFile } from './util/safe-write';

export const DEFAULT_SKIP_TOOLS = ['ListMcpResourcesTool', 'SlashCommand', 'Skill', 'TodoWrite', 'AskUserQuestion'];

export interface Paths {
  home: string;
  configDir: string;
  configFile: string;
  /** The plugin's url and token, saved by its SessionStart hook for the slash commands (they get no plugin variables). */
  pluginFile: string;
  stateDir: string;
  dataDir: string;
}

export interface Config {
  url: string | null;
  token: string | null;
  /** Sent as x-cairn-device when set, so the server can notice a token used from an unexpected machine. */
  device: string | null;
  excludeProjects: string[];
  skipTools: string[];
  /** Per-prompt recall injection on UserPromptSubmit (off by default: it costs a round trip per prompt). */
  promptContext: boolean;
  /**
   * Evidence (issue 34): blob ids of the files a tool call read or changed go with its event, and SessionStart
   * reports the checkout's state of the files memory cites. `CAIRN_EVIDENCE=off` sends neither.
   */
  evidence: boolean;
  spoolMaxEvents: number;
  spoolMaxBytes: number;
}

/** What the config file may hold (all optional). */
export type ConfigFile = Partial<Config>;

export function pathsFor(env: Io['env']): Paths {
  const home = homeOf(env);
  const configDir = join(env.XDG_CONFIG_HOME || join(home, '.config'), 'cairn');
  return {
    home,
    configDir,
    configFile: join(configDir, 'config.json'),
    pluginFile: join(configDir, 'plugin.json'),
    stateDir: join(env.XDG_STATE_HOME || join(home, '.local', 'state'), 'cairn'),
    dataDir: join(env.XDG_DATA_HOME || join(home, '.local', 'share'), 'cairn'),
  };
}

export function readConfigFile(paths: Paths): ConfigFile {
  try {
    const raw: unknown = JSON.parse(readFileSync(paths.configFile, 'utf8').replace(/^\uFEFF/, ''));
    return raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as ConfigFile) : {};
  } catch {
    return {};
  }
}

/** Writes the config file atomically, readable by the owner only (it holds a token). */
export function writeConfigFile(paths: Paths, file: ConfigFile): void {
  ensurePrivateDir(paths.configDir);
  safeWriteFile(paths.configFile, `${JSON.stringify(file, null, 2)}\n`, { mode: PRIVATE_FILE, exactMode: true });
}

const list = (v: string | undefined): string[] | undefined =>
  v === undefined
    ? undefined
    : v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
const bool = (v: string | undefined): boolean | undefined =>
  v === undefined ? undefined : /^(1|true|yes|on)$/i.test(v.trim());
const int = (v: string | undefined): number | undefined => {
  const n = v === undefined ? NaN : Number.parseInt(v, 10);
  return Number.isFinite(n) && n > 0 ? n : undefined;
};
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : null);
const strList = (v: unknown): string[] | undefined =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? list(v) : undefined;

function readPluginFile(paths: Paths): { url?: unknown; token?: unknown } {
  try {
    const raw: unknown = JSON.parse(readFileSync(paths.pluginFile, 'utf8'));
    return raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as { url?: unknown; token?: unknown }) : {};
  } catch {
    return {};
  }
}

/**
 * Claude Code passes a plugin's user_config (url, token) to its hooks as CLAUDE_PLUGIN_OPTION_* variables, but not
 * to a slash command's `!` line (2.1.332: /cairn:status in the plugin said "not configured"). So a hook that has
 * them keeps a copy, owner-only like `cairn login`'s file, which the commands read when nothing else names a
 * server. Written only when it changed: one small read per SessionStart.
 */
export function keepPluginLogin(env: Io['env'], paths: Paths): void {
  const url = str(env.CLAUDE_PLUGIN_OPTION_URL);
  const token = str(env.CLAUDE_PLUGIN_OPTION_TOKEN);
  if (!url || !token) return;
  const kept = readPluginFile(paths);
  if (kept.url === url && kept.token === token) return;
  ensurePrivateDir(paths.configDir);
  safeWriteFile(paths.pluginFile, `${JSON.stringify({ url, token }, null, 2)}\n`, {
    mode: PRIVATE_FILE,
    exactMode: true,
  });
}

export function loadConfig(env: Io['env'], paths: Paths): Config {
  const file = readConfigFile(paths);
  // Plugin installs pass their user_config as CLAUDE_PLUGIN_OPTION_* variables (to hooks; commands read the kept copy).
  const pluginUrl = env.CLAUDE_PLUGIN_OPTION_URL;
  const pluginToken = env.CLAUDE_PLUGIN_OPTION_TOKEN;
  let url = str(env.CAIRN_URL) ?? str(pluginUrl) ?? str(file.url);
  let token = str(env.CAIRN_TOKEN) ?? str(pluginToken) ?? str(file.token);
  if (!url || !token) {
    // The kept plugin login only as a whole: never one half of it beside another server's other half.
    const kept = readPluginFile(paths);
    if (str(kept.url) && str(kept.token) && !url && !token) [url, token] = [str(kept.url), str(kept.token)];
  }
  return {
    url: url ? url.replace(/\/+$/, '') : null,
    token,
    device: str(env.CAIRN_DEVICE) ?? str(file.device),
    excludeProjects: list(env.CAIRN_EXCLUDE_PROJECTS) ?? strList(file.excludeProjects) ?? [],
    skipTools: list(env.CAIRN_SKIP_TOOLS) ?? strList(file.skipTools) ?? DEFAULT_SKIP_TOOLS,
    promptContext:
      bool(env.CAIRN_PROMPT_CONTEXT) ?? (typeof file.promptContext === 'boolean' ? file.promptContext : false),
    evidence:
      (env.CAIRN_EVIDENCE === undefined ? undefined : !/^(0|false|no|off)$/i.test(env.CAIRN_EVIDENCE.trim())) ??
      (typeof file.evidence === 'boolean' ? file.evidence : true),
    spoolMaxEvents:
      int(env.CAIRN_SPOOL_MAX_EVENTS) ?? (typeof file.spoolMaxEvents === 'number' ? file.spoolMaxEvents : 5_000),
    spoolMaxBytes:
      int(env.CAIRN_SPOOL_MAX_BYTES) ?? (typeof file.spoolMaxBytes === 'number' ? file.spoolMaxBytes : 50_000_000),
  };
}

/** The config of a command that needs the server: null (after telling the user how to log in) without URL or token. */
export function loggedInConfig(io: Io, paths: Paths): (Config & { url: string; token: string }) | null {
  const config = loadConfig(io.env, paths);
  if (config.url && config.token) return { ...config, url: config.url, token: config.token };
  io.err('cairn: not logged in (run: cairn login --url … --token …)\n');
  return null;
}
