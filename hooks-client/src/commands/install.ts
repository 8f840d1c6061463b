// `cairn install` / `cairn uninstall`: cairn's hooks and MCP server in Claude Code's settings, reversibly.
import { copyFileSync, existsSync, mkdirSync, readFileSync, realpathSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig, pathsFor, type Paths } from '../config';
import type { Io } from '../io';
import { BUNDLED } from '../version';
import { addOurHooks, deepEqual, detectIndent, removeOurHooks, type Settings } from './settings-merge';

interface InstallRecord {
  /** Per file we changed: where its pre-cairn copy is, and whether it existed at all. */
  files: Record<string, { backup: string | null; existed: boolean }>;
}

// The installed copy is named .cjs: the build is plain script that runs as either kind, and Node starts a
// CommonJS entry ~5 ms faster than an ES module one (no ESM loader), which matters once per tool call.
export const INSTALLED_NAME = 'cairn.cjs';

const recordFile = (paths: Paths) => join(paths.configDir, 'install.json');

function readRecord(paths: Paths): InstallRecord {
  try {
    return JSON.parse(readFileSync(recordFile(paths), 'utf8')) as InstallRecord;
  } catch {
    return { files: {} };
  }
}

function writeAtomic(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

const readMaybe = (p: string): string | null => (existsSync(p) ? readFileSync(p, 'utf8') : null);

function parseSettings(text: string | null, path: string): Settings {
  if (text === null || !text.trim()) return {};
  const v: unknown = JSON.parse(text.replace(/^\uFEFF/, ''));
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error(`${path} is not a JSON object`);
  return v as Settings;
}

const MCP_NAME = 'cairn';

function addMcp(s: Settings, url: string, clientPath: string): Settings {
  const next = JSON.parse(JSON.stringify(s)) as Settings;
  const servers = (next.mcpServers && typeof next.mcpServers === 'object' && !Array.isArray(next.mcpServers) ? next.mcpServers : {}) as Settings;
  // The token stays in cairn's config: Claude Code asks the client for the header on each connect.
  servers[MCP_NAME] = { type: 'http', url: `${url}/mcp`, headersHelper: `node "${clientPath}" mcp-headers` };
  next.mcpServers = servers;
  return next;
}

function removeMcp(s: Settings): Settings {
  const next = JSON.parse(JSON.stringify(s)) as Settings;
  const servers = next.mcpServers;
  if (servers && typeof servers === 'object' && !Array.isArray(servers) && MCP_NAME in servers) {
    delete (servers as Settings)[MCP_NAME];
    if (!Object.keys(servers).length) delete next.mcpServers;
  }
  return next;
}

function render(value: Settings, like: string | null): string {
  return `${JSON.stringify(value, null, like ? detectIndent(like) : 2)}\n`;
}

/** Lines of `after` that `before` does not have, marked "+", and the reverse marked "-". */
function describeChange(before: string, after: string): string {
  const a = new Set(before.split('\n'));
  const b = new Set(after.split('\n'));
  const added = after.split('\n').filter((l) => !a.has(l)).map((l) => `+ ${l}`);
  const removed = before.split('\n').filter((l) => !b.has(l)).map((l) => `- ${l}`);
  return [...removed, ...added].join('\n');
}

interface Target {
  path: string;
  change: (s: Settings) => Settings;
}

function targets(io: Io, paths: Paths, project: boolean, settingsOverride: string | undefined) {
  const settings = settingsOverride ? resolve(io.cwd, settingsOverride) : project ? join(io.cwd, '.claude', 'settings.json') : join(paths.home, '.claude', 'settings.json');
  const mcp = project ? join(io.cwd, '.mcp.json') : join(paths.home, '.claude.json');
  return { settings, mcp };
}

/** The running client file, when it is the built one (the bundle is plain script: no import.meta). */
function selfPath(): string | null {
  if (!BUNDLED || !process.argv[1]) return null;
  let p: string;
  try {
    // `npx cairn` runs it through a link in npm's cache (node_modules/.bin/cairn): copy what it points at.
    p = realpathSync(process.argv[1]);
  } catch {
    return null;
  }
  return /\.[cm]?js$/.test(p) ? p : null;
}

export async function install(args: string[], io: Io): Promise<number> {
  const { values } = parseArgs({ args, options: { project: { type: 'boolean' }, 'dry-run': { type: 'boolean' }, settings: { type: 'string' }, client: { type: 'string' }, 'no-mcp': { type: 'boolean' } } });
  const paths = pathsFor(io.env);
  const config = loadConfig(io.env, paths);
  const dry = Boolean(values['dry-run']);
  const clientPath = values.client ? resolve(io.cwd, values.client) : join(paths.dataDir, INSTALLED_NAME);
  const self = selfPath();
  if (!values.client && !dry && self && resolve(self) !== clientPath) {
    mkdirSync(dirname(clientPath), { recursive: true });
    copyFileSync(self, clientPath);
  }
  const where = targets(io, paths, Boolean(values.project), values.settings);
  const list: Target[] = [{ path: where.settings, change: (s) => addOurHooks(s, clientPath) }];
  if (!values['no-mcp']) {
    if (config.url) list.push({ path: where.mcp, change: (s) => addMcp(s, config.url!, clientPath) });
    else io.err('cairn: not logged in, so the MCP server was not registered (run `cairn login --url … --token …`, then install again).\n');
  }
  const record = readRecord(paths);
  for (const t of list) {
    const before = readMaybe(t.path);
    let parsed: Settings;
    try {
      parsed = parseSettings(before, t.path);
    } catch (e) {
      io.err(`cairn: ${t.path} is not valid JSON (${(e as Error).message}); nothing changed.\n`);
      return 1;
    }
    const after = render(t.change(parsed), before);
    if (dry) {
      io.out(`${t.path}${before === null ? ' (new file)' : ''}:\n${describeChange(before ?? '', after) || '(no change)'}\n\n`);
      continue;
    }
    if (before === after) continue;
    if (!record.files[t.path]) {
      // Back up the user's own version once; a re-install must not overwrite it with one holding our entries.
      const backup = before === null ? null : `${t.path}.cairn-backup`;
      if (backup) writeFileSync(backup, before!);
      record.files[t.path] = { backup, existed: before !== null };
    }
    writeAtomic(t.path, after);
    io.out(`cairn: updated ${t.path}${record.files[t.path]!.backup ? ` (backup: ${record.files[t.path]!.backup})` : ''}\n`);
  }
  if (!dry) {
    writeAtomic(recordFile(paths), `${JSON.stringify(record, null, 2)}\n`);
    io.out(`cairn: hooks run ${clientPath}. Restart Claude Code to load them.\n`);
  }
  return 0;
}

export async function uninstall(args: string[], io: Io): Promise<number> {
  const { values } = parseArgs({ args, options: { project: { type: 'boolean' }, settings: { type: 'string' } } });
  const paths = pathsFor(io.env);
  const where = targets(io, paths, Boolean(values.project), values.settings);
  const record = readRecord(paths);
  for (const [path, change] of [[where.settings, removeOurHooks], [where.mcp, removeMcp]] as const) {
    const before = readMaybe(path);
    if (before === null) continue;
    let cleaned: Settings;
    try {
      cleaned = change(parseSettings(before, path));
    } catch (e) {
      io.err(`cairn: ${path} is not valid JSON (${(e as Error).message}); left as is.\n`);
      continue;
    }
    const rec = record.files[path];
    const backupText = rec?.backup ? readMaybe(rec.backup) : null;
    if (backupText !== null && deepEqual(cleaned, parseSettings(backupText, rec!.backup!))) {
      writeAtomic(path, backupText); // nothing else changed since install: the user's bytes come back exactly
      unlinkSync(rec!.backup!);
    } else if (rec && !rec.existed && !Object.keys(cleaned).length) {
      unlinkSync(path);
    } else if (!deepEqual(cleaned, parseSettings(before, path))) {
      writeAtomic(path, render(cleaned, before));
    } else {
      continue;
    }
    delete record.files[path];
    io.out(`cairn: removed cairn from ${path}\n`);
  }
  writeAtomic(recordFile(paths), `${JSON.stringify(record, null, 2)}\n`);
  return 0;
}

/** `cairn mcp-headers`: Claude Code's headersHelper for the MCP server. */
export async function mcpHeaders(_args: string[], io: Io): Promise<number> {
  const config = loadConfig(io.env, pathsFor(io.env));
  const headers: Record<string, string> = {};
  if (config.token) headers.Authorization = `Bearer ${config.token}`;
  if (config.device) headers['x-cairn-device'] = config.device;
  io.out(`${JSON.stringify(headers)}\n`);
  return 0;
}
