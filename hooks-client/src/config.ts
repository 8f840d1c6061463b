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
  v === undefined ? undefined : v.split(',').map((s) => s.trim()).filter(Boolean);
const bool = (v: string | undefined): boolean | undefined => (v === undefined ? undefined : /^(1|true|yes|on)$/i.test(v.trim()));
const int = (v: string | undefined): number | undefined => {
  const n = v === undefined ? NaN : Number.parseInt(v, 10);
  return Number.isFinite(n) && n > 0 ? n : undefined;
};
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : null);
const strList = (v: unknown): string[] | undefined =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? list(v) : undefined;

export function loadConfig(env: Io['env'], paths: Paths): Config {
  const file = readConfigFile(paths);
  // Plugin installs pass their user_config as CLAUDE_PLUGIN_OPTION_* variables.
  const pluginUrl = env.CLAUDE_PLUGIN_OPTION_URL;
  const pluginToken = env.CLAUDE_PLUGIN_OPTION_TOKEN;
  const url = str(env.CAIRN_URL) ?? str(pluginUrl) ?? str(file.url);
  return {
    url: url ? url.replace(/\/+$/, '') : null,
    token: str(env.CAIRN_TOKEN) ?? str(pluginToken) ?? str(file.token),
    device: str(env.CAIRN_DEVICE) ?? str(file.device),
    excludeProjects: list(env.CAIRN_EXCLUDE_PROJECTS) ?? strList(file.excludeProjects) ?? [],
    skipTools: list(env.CAIRN_SKIP_TOOLS) ?? strList(file.skipTools) ?? DEFAULT_SKIP_TOOLS,
    promptContext: bool(env.CAIRN_PROMPT_CONTEXT) ?? (typeof file.promptContext === 'boolean' ? file.promptContext : false),
    spoolMaxEvents: int(env.CAIRN_SPOOL_MAX_EVENTS) ?? (typeof file.spoolMaxEvents === 'number' ? file.spoolMaxEvents : 5_000),
    spoolMaxBytes: int(env.CAIRN_SPOOL_MAX_BYTES) ?? (typeof file.spoolMaxBytes === 'number' ? file.spoolMaxBytes : 50_000_000),
  };
}

/** The config of a command that needs the server: null (after telling the user how to log in) without URL or token. */
export function loggedInConfig(io: Io, paths: Paths): (Config & { url: string; token: string }) | null {
  const config = loadConfig(io.env, paths);
  if (config.url && config.token) return { ...config, url: config.url, token: config.token };
  io.err('cairn: not logged in (run: cairn login --url … --token …)\n');
  return null;
}
