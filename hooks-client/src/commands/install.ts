// `cairn install` / `cairn uninstall`: cairn's hooks and MCP server in an agent's configuration, reversibly.
import { readFileSync, realpathSync, rmdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { applyEdits, revertEdits } from '../agents/apply';
import { AGENTS } from '../agents/adapters';
import {
  claudeCommandDirs,
  claudeCommandEdits,
  claudeHookEdit,
  claudeMcpEdit,
  claudeTargets,
  findClaudeCli,
  MCP_NAME,
  mcpServerEntry,
} from '../agents/claude-code';
import { codexEdits } from '../agents/codex';
import { cursorEdits } from '../agents/cursor';
import type { FileEdit } from '../agents/file-edit';
import { geminiEdits } from '../agents/gemini';
import { opencodeEdits } from '../agents/opencode';
import { loadConfig, pathsFor } from '../config';
import { NATIVE_CHOICES, nativeMemoryStep, parseNativeChoice } from './native-memory';
import type { Io } from '../io';
import { renewDoorSettings } from '../door/close';
import { forgetDoorSettings, planDoor, portOverride, writeDoor } from '../door/state';
import { stopSender } from '../sender/sender-lock';
import { ensurePrivateDir, safeWriteFile } from '../util/safe-write';
import { BUNDLED } from '../version';

// The installed copy is named .cjs: the build is plain script that runs as either kind, and Node starts a
// CommonJS entry ~5 ms faster than an ES module one (no ESM loader), which matters once per tool call.
export const INSTALLED_NAME = 'cairn.cjs';

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

/** Runs `claude` with `args` (child_process is loaded here, on use: no hook ever pays for it). */
function spawnClaude(io: Io, exe: string, args: string[]) {
  return process
    .getBuiltinModule('node:child_process')
    .spawnSync(exe, args, { cwd: io.cwd, env: io.env as NodeJS.ProcessEnv, encoding: 'utf8', timeout: 60_000 });
}

/** Runs the `claude` CLI; true when it succeeded. Its output is shown only when it failed. */
function claudeCli(io: Io, exe: string, args: string[]): boolean {
  const r = spawnClaude(io, exe, args);
  if (r.status === 0) return true;
  io.err(
    `cairn: \`claude ${args.slice(0, 3).join(' ')}\` failed (${r.error?.message ?? `exit ${r.status}`}): ${(r.stderr || r.stdout || '').trim()}\n`,
  );
  return false;
}

const OPTIONS = {
  agent: { type: 'string' },
  project: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  settings: { type: 'string' },
  client: { type: 'string' },
  'no-mcp': { type: 'boolean' },
  'no-statusline': { type: 'boolean' },
  'native-memory': { type: 'string' },
} as const;

/** The edits for an agent other than Claude Code (user scope only: their project files are committed). */
function otherAgentEdits(agent: string, io: Io, home: string, clientPath: string, withMcp: boolean): FileEdit[] {
  switch (agent) {
    case 'codex':
      return codexEdits(io.env, home, clientPath, withMcp);
    case 'cursor':
      return cursorEdits(home, clientPath, withMcp);
    case 'opencode':
      return opencodeEdits(io.env, home, clientPath, withMcp);
    default:
      return geminiEdits(home, clientPath, withMcp);
  }
}

/** The agent named by --agent, or null (after saying why) when it is not one cairn knows or cannot combine with --project. */
function chosenAgent(io: Io, agent: string | undefined, project: boolean): string | null {
  const name = agent ?? 'claude-code';
  if (!(AGENTS as readonly string[]).includes(name)) {
    io.err(`cairn: unknown agent "${name}" (expected one of ${AGENTS.join(', ')})\n`);
    return null;
  }
  if (project && name !== 'claude-code') {
    io.err(
      `cairn: --project is for Claude Code only; ${name} is installed for this user (its project files are meant to be committed)\n`,
    );
    return null;
  }
  return name;
}

export async function install(args: string[], io: Io): Promise<number> {
  const { values } = parseArgs({ args, options: OPTIONS });
  const agent = chosenAgent(io, values.agent, Boolean(values.project));
  if (!agent) return 2;
  const native = parseNativeChoice(values['native-memory']);
  if (values['native-memory'] !== undefined && (!native || agent !== 'claude-code')) {
    io.err(`cairn: --native-memory takes ${NATIVE_CHOICES.join(', ')} (Claude Code's auto memory)\n`);
    return 2;
  }
  const paths = pathsFor(io.env);
  const config = loadConfig(io.env, paths);
  const dry = Boolean(values['dry-run']);
  const clientPath = values.client ? resolve(io.cwd, values.client) : join(paths.dataDir, INSTALLED_NAME);
  const self = selfPath();
  if (!values.client && !dry && self && resolve(self) !== clientPath) {
    // cairn's own data folder, owner-only; a link at the client's path is refused, not written through.
    ensurePrivateDir(dirname(clientPath));
    safeWriteFile(clientPath, readFileSync(self));
  }
  if (agent !== 'claude-code') {
    if (!config.url)
      io.err(
        'cairn: not logged in yet: the hooks and MCP server will work once you run `cairn login --url … --token …`.\n',
      );
    if (!applyEdits(otherAgentEdits(agent, io, paths.home, clientPath, !values['no-mcp']), io, paths, dry)) return 1;
    if (!dry) io.out(`cairn: hooks run ${clientPath}. Restart ${agent} to load them (see docs/agents.md).\n`);
    return 0;
  }
  const where = claudeTargets(io, paths.home, Boolean(values.project), values.settings);
  // PostToolUse through the sender's HTTP door (no process per tool call), unless the sender is switched off: a
  // random port (door/state.ts) and a new nonce every time the door's settings are written.
  const door =
    io.env.CAIRN_SENDER === 'off'
      ? null
      : await planDoor(paths.stateDir, io.now(), {
          port: portOverride(io.env),
          settings: { path: where.settings, ...(where.settingsRoot ? { root: where.settingsRoot } : {}) },
          free: portFree,
        });
  const http = door ? { port: door.port, nonce: dry ? '<a new secret, made by install>' : door.nonce } : null;
  const edits = [
    claudeHookEdit(where, clientPath, { statusLine: !values['no-statusline'], http }),
    ...claudeCommandEdits(io.env, paths.home, clientPath),
  ];
  let viaCli: string | null = null;
  if (!values['no-mcp']) {
    if (!config.url) {
      io.err(
        'cairn: not logged in, so the MCP server was not registered (run `cairn login --url … --token …`, then install again).\n',
      );
    } else {
      const entry = mcpServerEntry(config.url, clientPath);
      // Claude Code's own command is the supported way to register a server; the file edit is the fallback.
      const cli = dry ? null : findClaudeCli(io.env);
      if (cli && claudeCli(io, cli, ['mcp', 'add-json', MCP_NAME, JSON.stringify(entry), '--scope', where.scope]))
        viaCli = cli;
      else edits.push(claudeMcpEdit(where, entry));
    }
  }
  if (!applyEdits(edits, io, paths, dry)) return 1;
  if (!dry && door) {
    writeDoor(paths.stateDir, door);
    // Other settings files that name the door (another project's) take the new nonce too.
    renewDoorSettings(door, where.settings, io);
  } else if (!dry) forgetDoorSettings(paths.stateDir, where.settings);
  if (!dry) {
    if (viaCli) io.out(`cairn: registered the MCP server with \`claude mcp add-json\` (${where.scope} scope)\n`);
    io.out(`cairn: hooks run ${clientPath}. Restart Claude Code to load them.\n`);
    // Beside Claude Code's own memory: found, said, and kept, imported or left (issue 36).
    return nativeMemoryStep(io, paths, native);
  }
  return 0;
}

export async function uninstall(args: string[], io: Io): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { agent: { type: 'string' }, project: { type: 'boolean' }, settings: { type: 'string' } },
  });
  const agent = chosenAgent(io, values.agent, Boolean(values.project));
  if (!agent) return 2;
  const paths = pathsFor(io.env);
  if (agent !== 'claude-code') {
    revertEdits(otherAgentEdits(agent, io, paths.home, '', true), io, paths);
    return 0;
  }
  const where = claudeTargets(io, paths.home, Boolean(values.project), values.settings);
  const cli = findClaudeCli(io.env);
  // Either way the server was registered, take it out: through the CLI when it is there, then from the file.
  if (cli) spawnClaude(io, cli, ['mcp', 'remove', MCP_NAME, '--scope', where.scope]);
  const edits = [claudeHookEdit(where, ''), claudeMcpEdit(where, {}), ...claudeCommandEdits(io.env, paths.home, '')];
  // Installs before 0.2 wrote --project into the committed files: take cairn out of those too.
  if (values.project && !values.settings) {
    edits.push(claudeHookEdit({ ...where, settings: join(io.cwd, '.claude', 'settings.json') }, ''));
    edits.push(claudeMcpEdit({ ...where, mcpFile: join(io.cwd, '.mcp.json'), mcpAt: [] }, {}));
  }
  revertEdits(edits, io, paths);
  for (const e of edits) forgetDoorSettings(paths.stateDir, e.path);
  // Folders install made for them go too, each only when empty (a file the user put there keeps its folder).
  for (const dir of claudeCommandDirs(io.env, paths.home).flatMap((d) => [d, dirname(d)])) {
    try {
      rmdirSync(dir);
    } catch {
      // not there, or not empty
    }
  }
  // Nothing starts the background sender any more: let it send what it holds and leave now, not when idle.
  if (stopSender(paths.stateDir, io.now())) io.out('cairn: stopped the background sender.\n');
  return 0;
}

/** Whether 127.0.0.1:`port` can be bound right now (install's pick of a random port). */
function portFree(port: number): Promise<boolean> {
  const server = process.getBuiltinModule('node:net').createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
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
