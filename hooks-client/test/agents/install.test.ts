// `cairn install` / `uninstall`: merges into Claude Code's settings idempotently and restores them exactly.
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from '../../src/run';
import { fakeServer, machine, memIo, tempDir } from '../support';

const USER_SETTINGS = `{
    "model": "opus",
    "hooks": {
        "PostToolUse": [
            {
                "matcher": "Edit|Write",
                "hooks": [ { "type": "command", "command": "npx prettier --write \\"$FILE\\"" } ]
            }
        ],
        "Stop": [ { "hooks": [ { "type": "command", "command": "say done" } ] } ]
    },
    "permissions": { "allow": ["Bash(npm test)"] }
}
`;

function setup(withSettings = true) {
  const { home, env } = machine('https://cairn.example.dev');
  // No `claude` CLI on this PATH unless a test puts one there: install then edits the files itself.
  env.PATH = tempDir('cairn-path-');
  const settingsPath = join(home, '.claude', 'settings.json');
  mkdirSync(join(home, '.claude'), { recursive: true });
  if (withSettings) writeFileSync(settingsPath, USER_SETTINGS);
  writeFileSync(
    join(home, '.claude.json'),
    '{"numStartups": 3, "mcpServers": {"other": {"type": "stdio", "command": "x"}}}\n',
  );
  return { home, env, settingsPath, claudeJson: join(home, '.claude.json') };
}

const install = (env: Record<string, string | undefined>, ...args: string[]) =>
  run(['install', '--client', '/opt/cairn/cairn.mjs', ...args], memIo({ env }));

describe('install', () => {
  it('adds one handler per event, keeps the user’s hooks, and registers the MCP server without the token', async () => {
    const { env, settingsPath, claudeJson } = setup();
    expect(await install(env)).toBe(0);
    const s = JSON.parse(readFileSync(settingsPath, 'utf8'));
    expect(s.model).toBe('opus');
    expect(s.hooks.PostToolUse).toHaveLength(2);
    expect(s.hooks.PostToolUse[0].hooks[0].command).toContain('prettier');
    // No process per tool call: Claude Code POSTs the call to the sender's loopback door, the secret read from
    // settings env; every other event is an exec-form command (no shell).
    // The door's port, chosen at random by install below every ephemeral range, and its secret: in the 0700 state
    // folder and in the settings.
    const door = JSON.parse(readFileSync(join(env.HOME!, '.local', 'state', 'cairn', 'door.json'), 'utf8'));
    const port = door.port;
    expect(port).toBeGreaterThanOrEqual(20_000);
    expect(port).toBeLessThan(32_768);
    expect(s.hooks.PostToolUse[1]).toEqual({
      matcher: '*',
      hooks: [
        {
          type: 'http',
          url: `http://127.0.0.1:${port}/cairn/hook/post-tool-use`,
          timeout: 5,
          headers: {
            'x-cairn-nonce': '$CAIRN_SENDER_NONCE',
            'x-cairn-internal': '$CAIRN_INTERNAL',
            'x-cairn-exclude-projects': '$CAIRN_EXCLUDE_PROJECTS',
            'x-cairn-skip-tools': '$CAIRN_SKIP_TOOLS',
          },
          allowedEnvVars: ['CAIRN_SENDER_NONCE', 'CAIRN_INTERNAL', 'CAIRN_EXCLUDE_PROJECTS', 'CAIRN_SKIP_TOOLS'],
        },
      ],
    });
    expect(s.env.CAIRN_SENDER_NONCE).toBe(door.nonce);
    expect(door.settings).toEqual([{ path: settingsPath }]);
    expect(s.hooks.SessionStart[0].hooks[0]).toEqual({
      type: 'command',
      command: 'node',
      args: ['/opt/cairn/cairn.mjs', 'hook', 'session-start'],
      timeout: 10,
    });
    expect(s.hooks.PreToolUse[0].matcher).toBe('Read');
    expect(Object.keys(s.hooks).sort()).toEqual([
      'PostToolUse',
      'PostToolUseFailure',
      'PreCompact',
      'PreToolUse',
      'SessionEnd',
      'SessionStart',
      'Stop',
      'UserPromptSubmit',
    ]);
    const mcp = JSON.parse(readFileSync(claudeJson, 'utf8'));
    expect(mcp.mcpServers.other).toBeDefined();
    expect(mcp.mcpServers.cairn).toEqual({
      type: 'http',
      url: 'https://cairn.example.dev/mcp',
      headersHelper: 'node "/opt/cairn/cairn.mjs" mcp-headers',
    });
    expect(readFileSync(claudeJson, 'utf8')).not.toContain('tok-test');
    expect(readFileSync(`${settingsPath}.cairn-backup`, 'utf8')).toBe(USER_SETTINGS);
  });

  it('is idempotent but for the door’s secret: a second install re-issues it and changes nothing else', async () => {
    const { env, settingsPath } = setup();
    await install(env);
    const once = JSON.parse(readFileSync(settingsPath, 'utf8'));
    await install(env);
    const twice = JSON.parse(readFileSync(settingsPath, 'utf8'));
    expect(twice.env.CAIRN_SENDER_NONCE).not.toBe(once.env.CAIRN_SENDER_NONCE);
    expect({ ...twice, env: {} }).toEqual({ ...once, env: {} });
    expect(readFileSync(`${settingsPath}.cairn-backup`, 'utf8')).toBe(USER_SETTINGS);
  });

  it('shows the change with --dry-run and writes nothing', async () => {
    const { env, settingsPath } = setup();
    const io = memIo({ env });
    expect(await run(['install', '--client', '/opt/cairn/cairn.mjs', '--dry-run'], io)).toBe(0);
    expect(io.stdout).toContain('+');
    expect(io.stdout).toContain('"session-start"');
    expect(readFileSync(settingsPath, 'utf8')).toBe(USER_SETTINGS);
    expect(existsSync(`${settingsPath}.cairn-backup`)).toBe(false);
  });

  it('refuses to touch a settings file that is not valid JSON', async () => {
    const { env, settingsPath } = setup();
    writeFileSync(settingsPath, '{ "model": ');
    expect(await install(env)).toBe(1);
    expect(readFileSync(settingsPath, 'utf8')).toBe('{ "model": ');
  });

  it('with --project writes nothing machine-specific into committed files: paths go to settings.local.json and the local MCP scope', async () => {
    const { env, claudeJson } = setup();
    const repo = tempDir();
    const committed = '{\n  "permissions": { "allow": ["Bash(npm test)"] }\n}\n';
    mkdirSync(join(repo, '.claude'), { recursive: true });
    writeFileSync(join(repo, '.claude', 'settings.json'), committed);
    expect(await run(['install', '--client', '/opt/cairn/cairn.mjs', '--project'], memIo({ env, cwd: repo }))).toBe(0);
    expect(readFileSync(join(repo, '.claude', 'settings.json'), 'utf8')).toBe(committed);
    expect(existsSync(join(repo, '.mcp.json'))).toBe(false);
    const local = JSON.parse(readFileSync(join(repo, '.claude', 'settings.local.json'), 'utf8'));
    expect(local.hooks.SessionStart[0].hooks[0].args).toEqual(['/opt/cairn/cairn.mjs', 'hook', 'session-start']);
    const state = JSON.parse(readFileSync(claudeJson, 'utf8'));
    expect(state.projects[repo].mcpServers.cairn.url).toBe('https://cairn.example.dev/mcp');
    expect(state.mcpServers.cairn).toBeUndefined();
    expect(await run(['uninstall', '--project'], memIo({ env, cwd: repo }))).toBe(0);
    expect(existsSync(join(repo, '.claude', 'settings.local.json'))).toBe(false);
    expect(JSON.parse(readFileSync(claudeJson, 'utf8')).projects).toBeUndefined();
    expect(readFileSync(join(repo, '.claude', 'settings.json'), 'utf8')).toBe(committed);
  });

  it('honours CLAUDE_CONFIG_DIR for the settings and Claude Code’s state file, and restores both', async () => {
    const { env, home, settingsPath } = setup();
    const dir = tempDir('cairn-claude-config-');
    const state = '{"numStartups": 1}\n';
    writeFileSync(join(dir, 'settings.json'), USER_SETTINGS);
    writeFileSync(join(dir, '.claude.json'), state);
    env.CLAUDE_CONFIG_DIR = dir;
    expect(await install(env)).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8')).hooks.SessionStart).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(dir, '.claude.json'), 'utf8')).mcpServers.cairn.type).toBe('http');
    expect(readFileSync(settingsPath, 'utf8')).toBe(USER_SETTINGS);
    expect(readFileSync(join(home, '.claude.json'), 'utf8')).not.toContain('cairn');
    expect(await run(['uninstall'], memIo({ env }))).toBe(0);
    expect(readFileSync(join(dir, 'settings.json'), 'utf8')).toBe(USER_SETTINGS);
    expect(readFileSync(join(dir, '.claude.json'), 'utf8')).toBe(state);
  });

  it('registers the MCP server through `claude mcp add-json` when the claude CLI is on PATH, and removes it the same way', async () => {
    const { env, claudeJson } = setup();
    const bin = tempDir('cairn-bin-');
    const log = join(bin, 'calls.log');
    writeFileSync(join(bin, 'claude'), `#!/bin/sh\nprintf '%s|' "$@" >> "${log}"\necho >> "${log}"\n`, { mode: 0o755 });
    env.PATH = bin;
    const before = readFileSync(claudeJson, 'utf8');
    expect(await install(env)).toBe(0);
    const entry = JSON.stringify({
      type: 'http',
      url: 'https://cairn.example.dev/mcp',
      headersHelper: 'node "/opt/cairn/cairn.mjs" mcp-headers',
    });
    expect(readFileSync(log, 'utf8')).toBe(`mcp|add-json|cairn|${entry}|--scope|user|\n`);
    expect(readFileSync(claudeJson, 'utf8')).toBe(before);
    expect(await run(['uninstall'], memIo({ env }))).toBe(0);
    expect(readFileSync(log, 'utf8').split('\n')[1]).toBe('mcp|remove|cairn|--scope|user|');
  });

  it('falls back to editing Claude Code’s state file when `claude mcp add-json` fails', async () => {
    const { env, claudeJson } = setup();
    const bin = tempDir('cairn-bin-');
    writeFileSync(join(bin, 'claude'), '#!/bin/sh\necho "unknown command" >&2\nexit 1\n', { mode: 0o755 });
    env.PATH = bin;
    const io = memIo({ env });
    expect(await run(['install', '--client', '/opt/cairn/cairn.mjs'], io)).toBe(0);
    expect(io.stderr).toContain('unknown command');
    expect(JSON.parse(readFileSync(claudeJson, 'utf8')).mcpServers.cairn.url).toBe('https://cairn.example.dev/mcp');
  });
});

describe('uninstall', () => {
  it('leaves the settings file with the user’s other hooks byte-identical to before', async () => {
    const { env, settingsPath, claudeJson } = setup();
    const claudeBefore = readFileSync(claudeJson, 'utf8');
    await install(env);
    await install(env);
    expect(await run(['uninstall'], memIo({ env }))).toBe(0);
    expect(readFileSync(settingsPath, 'utf8')).toBe(USER_SETTINGS);
    expect(readFileSync(claudeJson, 'utf8')).toBe(claudeBefore);
    expect(existsSync(`${settingsPath}.cairn-backup`)).toBe(false);
  });

  it('takes out hooks installed at the default client path (cairn.cjs) and does not duplicate them on re-install', async () => {
    const { env, settingsPath } = setup();
    await run(['install'], memIo({ env }));
    await run(['install'], memIo({ env }));
    const s = JSON.parse(readFileSync(settingsPath, 'utf8'));
    expect(s.hooks.SessionStart).toHaveLength(1);
    expect(s.hooks.SessionStart[0].hooks[0].args).toEqual([
      expect.stringMatching(/cairn\.cjs$/),
      'hook',
      'session-start',
    ]);
    expect(await run(['uninstall'], memIo({ env }))).toBe(0);
    expect(readFileSync(settingsPath, 'utf8')).toBe(USER_SETTINGS);
  });

  it('keeps changes the user made after install, removing only cairn', async () => {
    const { env, settingsPath } = setup();
    await install(env);
    const s = JSON.parse(readFileSync(settingsPath, 'utf8'));
    s.theme = 'dark';
    writeFileSync(settingsPath, JSON.stringify(s, null, 4));
    await run(['uninstall'], memIo({ env }));
    const after = JSON.parse(readFileSync(settingsPath, 'utf8'));
    expect(after.theme).toBe('dark');
    expect(JSON.stringify(after)).not.toContain('cairn');
    expect(after.hooks.Stop).toEqual([{ hooks: [{ type: 'command', command: 'say done' }] }]);
    expect(readFileSync(settingsPath, 'utf8')).toMatch(/^ {4}"model"/m);
  });

  it('gives the user’s own env back byte for byte after putting the sender’s secret in it', async () => {
    const { env, settingsPath } = setup(false);
    const theirs = '{\n  "env": { "FOO": "1" },\n  "model": "opus"\n}\n';
    writeFileSync(settingsPath, theirs);
    await install(env);
    const s = JSON.parse(readFileSync(settingsPath, 'utf8'));
    expect(s.env).toEqual({ FOO: '1', CAIRN_SENDER_NONCE: expect.stringMatching(/^[\w-]{32}$/) });
    expect(await run(['uninstall'], memIo({ env }))).toBe(0);
    expect(readFileSync(settingsPath, 'utf8')).toBe(theirs);
  });

  it('makes a settings file that others could read owner-only once it holds the sender’s secret (also on a re-install that changes nothing), and leaves it so after uninstall', async () => {
    const { env, settingsPath } = setup();
    chmodSync(settingsPath, 0o644);
    const io = memIo({ env });
    expect(await run(['install', '--client', '/opt/cairn/cairn.mjs'], io)).toBe(0);
    expect(statSync(settingsPath).mode & 0o777).toBe(0o600);
    expect(io.stdout).toContain('now readable by you only: it holds the sender’s secret');
    chmodSync(settingsPath, 0o640);
    expect(await install(env)).toBe(0);
    expect(statSync(settingsPath).mode & 0o777).toBe(0o600);
    expect(await run(['uninstall'], memIo({ env }))).toBe(0);
    expect(readFileSync(settingsPath, 'utf8')).toBe(USER_SETTINGS);
    expect(statSync(settingsPath).mode & 0o777).toBe(0o600);
    // Without the secret (CAIRN_SENDER=off) a mode is kept as it is.
    chmodSync(settingsPath, 0o644);
    expect(await install({ ...env, CAIRN_SENDER: 'off' })).toBe(0);
    expect(statSync(settingsPath).mode & 0o777).toBe(0o644);
  });

  it('replaces the shell-form hooks of an older install instead of adding a second set', async () => {
    const { env, settingsPath } = setup(false);
    writeFileSync(
      settingsPath,
      '{ "hooks": { "SessionStart": [ { "hooks": [ { "type": "command", "command": "node \\"/opt/cairn/cairn.cjs\\" hook session-start", "timeout": 10 } ] } ] } }\n',
    );
    await install(env);
    const s = JSON.parse(readFileSync(settingsPath, 'utf8'));
    expect(s.hooks.SessionStart).toEqual([
      {
        matcher: 'startup|resume|clear|compact|fork',
        hooks: [
          { type: 'command', command: 'node', args: ['/opt/cairn/cairn.mjs', 'hook', 'session-start'], timeout: 10 },
        ],
      },
    ]);
  });

  it('keeps PostToolUse a command hook, with no secret in settings, when the sender is switched off (CAIRN_SENDER=off)', async () => {
    const { env, settingsPath } = setup();
    env.CAIRN_SENDER = 'off';
    await install(env);
    const s = JSON.parse(readFileSync(settingsPath, 'utf8'));
    expect(s.hooks.PostToolUse[1].hooks).toEqual([
      {
        type: 'command',
        command: 'node',
        args: ['/opt/cairn/cairn.mjs', 'hook', 'post-tool-use'],
        timeout: 10,
        async: true,
      },
    ]);
    expect(s.env).toBeUndefined();
    expect(await run(['uninstall'], memIo({ env }))).toBe(0);
    expect(readFileSync(settingsPath, 'utf8')).toBe(USER_SETTINGS);
  });

  it('removes a settings file it created', async () => {
    const { env, settingsPath } = setup(false);
    await install(env);
    expect(existsSync(settingsPath)).toBe(true);
    await run(['uninstall'], memIo({ env }));
    expect(existsSync(settingsPath)).toBe(false);
  });
});

describe('login and mcp-headers', () => {
  it('saves url and token owner-only and hands the token to Claude Code only through the headers helper', async () => {
    const { env } = machine(null);
    const io = memIo({ env });
    expect(await run(['login', '--url', 'http://127.0.0.1:9/', '--token', 'tok-abc'], io)).toBe(0);
    expect(io.stdout).toContain('not reachable');
    const configFile = join(env.HOME!, '.config', 'cairn', 'config.json');
    expect(JSON.parse(readFileSync(configFile, 'utf8'))).toMatchObject({ url: 'http://127.0.0.1:9', token: 'tok-abc' });
    const { statSync } = await import('node:fs');
    expect(statSync(configFile).mode & 0o077).toBe(0);
    const headers = memIo({ env });
    await run(['mcp-headers'], headers);
    expect(JSON.parse(headers.stdout)).toEqual({ Authorization: 'Bearer tok-abc' });
  });

  it('login exits 1 and says so on stderr when the server refuses the token', async () => {
    const server = await fakeServer();
    try {
      const { env } = machine(null);
      const io = memIo({ env });
      expect(await run(['login', '--url', server.url, '--token', 'tok-typo'], io)).toBe(1);
      expect(io.stderr).toContain('token was refused');
      const ok = memIo({ env });
      expect(await run(['login', '--url', server.url, '--token', 'tok-test'], ok)).toBe(0);
      expect(ok.stdout).toContain('token valid');
    } finally {
      await server.close();
    }
  });

  it('rejects a URL that is not http(s)', async () => {
    const io = memIo({ env: machine(null).env });
    expect(await run(['login', '--url', 'ftp://x', '--token', 't'], io)).toBe(2);
  });
});
