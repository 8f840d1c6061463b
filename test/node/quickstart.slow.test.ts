// The README's quick start, run as a newcomer would: `npm start`, then every command of "connect Claude Code"
// exactly as the README prints them (URL and token filled in). `npm install` is what made this suite possible
// and `npm test` is this suite, so those two are checked for presence only.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadPort, tempDir } from '../../hooks-client/test/support';

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The shell blocks of the README's "Quick start" section, one command per line, comments removed. */
function quickStartBlocks(): string[][] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(
    readme.indexOf('## Quick start'),
    readme.indexOf('\n## ', readme.indexOf('## Quick start') + 1),
  );
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) =>
    m[1]!
      .split('\n')
      .map((l) => l.replace(/\s+#.*$/, '').trim())
      .filter(Boolean),
  );
}

let start: ChildProcess;
let output = '';
let url = '';
let token = '';

beforeAll(async () => {
  const port = await deadPort(); // a free port: bound, then released
  // Its own process group, so stopping it stops npm, start.mjs and wrangler together.
  start = spawn('npm', ['start'], {
    cwd: ROOT,
    env: { ...process.env, CAIRN_PORT: String(port) },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  start.stdout!.on('data', (d) => (output += d));
  start.stderr!.on('data', (d) => (output += d));
  const deadline = Date.now() + 150_000;
  while (!/Press Ctrl\+C to stop/.test(output)) {
    if (start.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not come up:\n${output}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  url = /cairn is running at (\S+)/.exec(output)![1]!;
  token = /dev token:\s+(\S+)/.exec(output)![1]!;
}, 180_000);

afterAll(async () => {
  if (start?.pid && start.exitCode === null) {
    const exited = new Promise((r) => start.once('exit', r));
    process.kill(-start.pid, 'SIGTERM');
    await exited;
  }
});

describe('README quick start', () => {
  it('lists npm install, npm start and npm test first, as this test assumes', () => {
    expect(quickStartBlocks()[0]).toEqual(['npm install', 'npm start', 'npm test']);
  });

  it('npm start prints the URL, a dev token and what to run next, and no wrangler warnings', () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(token).toMatch(/^cairn_/);
    expect(output).toContain(`npx cairn login --url ${url} --token ${token}`);
    expect(output).not.toMatch(/WARNING|AI bindings|Vectorize/);
  });

  it('the commands that connect Claude Code work as printed: login, install, status', async () => {
    const connect = quickStartBlocks().find((b) => b.some((l) => l.startsWith('npx cairn login')));
    expect(connect).toBeDefined();
    const home = tempDir('cairn-quickstart-');
    const env: Record<string, string | undefined> = { ...process.env, HOME: home };
    // A newcomer's machine: none of cairn's or Claude Code's location overrides set (unset, not empty: an empty
    // CLAUDE_CONFIG_DIR makes the claude CLI write into the current folder).
    for (const k of [
      'XDG_CONFIG_HOME',
      'XDG_STATE_HOME',
      'XDG_DATA_HOME',
      'CLAUDE_CONFIG_DIR',
      'CAIRN_URL',
      'CAIRN_TOKEN',
    ])
      delete env[k];
    // npx puts node_modules/.bin (the pinned claude CLI) on PATH, so install registers the MCP server through
    // `claude mcp add-json`, offline.
    Object.assign(env, { DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' });
    for (const line of connect!) {
      const argv = line.replace('http://127.0.0.1:8787', url).replace('<dev token>', token).split(/\s+/);
      expect(argv[0]).toBe('npx');
      const r = await exec('npx', argv.slice(1), { cwd: ROOT, env, timeout: 60_000 });
      if (argv[2] === 'status') expect(r.stdout + r.stderr).toMatch(/reachable|ok|logged in/i);
    }
    const settings = JSON.parse(readFileSync(join(home, '.claude', 'settings.json'), 'utf8')) as {
      hooks: Record<string, unknown>;
    };
    expect(Object.keys(settings.hooks)).toContain('SessionStart');
    const claudeJson = readFileSync(join(home, '.claude.json'), 'utf8');
    expect(JSON.parse(claudeJson).mcpServers.cairn.url).toBe(`${url}/mcp`);
    expect(claudeJson).not.toContain(token);
    expect(existsSync(join(home, '.local', 'share', 'cairn', 'cairn.cjs'))).toBe(true);
  }, 120_000);
});
