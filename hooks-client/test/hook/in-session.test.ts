// Memory seen and steered from inside Claude Code: the status line (`cairn statusline`, installed into
// settings and wrapped around the user's own), pauses honoured by the hooks, and the "this session so far"
// block after a compaction, against a fake API on 127.0.0.1.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_CONTEXT_CHARS } from '../../src/hook/context';
import { run } from '../../src/run';
import { fakeServer, hookJson, machine, memIo, tempDir, type FakeServer } from '../support';

let server: FakeServer;
let observations = 0;
let soFar = '';
let observerState: Record<string, unknown> = { state: 'ok', code: null, notice: null };
let memories: { used: number; stale: number } | undefined;
let receipts: unknown = null;
beforeAll(async () => {
  server = await fakeServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  server.context = { index: '', file: '', prompt: '' };
  observations = 0;
  soFar = '';
  observerState = { state: 'ok', code: null, notice: null };
  memories = undefined;
  receipts = null;
  server.handler = (req, res) => {
    const send = (body: string, type: string) => {
      res.writeHead(200, { 'content-type': type });
      res.end(body);
      return true;
    };
    if (req.path.startsWith('/api/observer/state')) return send(JSON.stringify(observerState), 'application/json');
    if (req.path.startsWith('/api/context/session?')) {
      if (req.path.includes('format=text')) return send(soFar, 'text/plain');
      return send(JSON.stringify({ observations, summarized: false, text: '', memories }), 'application/json');
    }
    if (req.path.startsWith('/api/receipts?') && receipts) return send(JSON.stringify(receipts), 'application/json');
    return false;
  };
});

const network = () =>
  server.requests.filter((r) => r.path.startsWith('/api/observer/state') || r.path.startsWith('/api/context/session'));

async function statusline(
  env: Record<string, string | undefined>,
  input: Record<string, unknown>,
  now = Date.now(),
  args: string[] = [],
) {
  const io = memIo({ env, stdin: JSON.stringify(input), now: () => now });
  expect(await run(['statusline', ...args], io)).toBe(0);
  return io.stdout;
}

async function hook(
  env: Record<string, string | undefined>,
  event: string,
  fields: Record<string, unknown>,
  now = Date.now(),
) {
  const io = memIo({ env, stdin: hookJson(fields), now: () => now });
  expect(await run(['hook', event], io)).toBe(0);
  return io.stdout
    ? (JSON.parse(io.stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput
        .additionalContext
    : '';
}

describe('cairn statusline', () => {
  it("prints one line with the session's remembered and recalled counts, the backlog and the observer's state", async () => {
    const { env } = machine(server.url);
    observations = 7;
    server.context.index = '<cairn-context>\nindex\n</cairn-context>';
    await hook(env, 'session-start', { session_id: 'sl-1', cwd: tempDir(), source: 'startup' });
    const line = await statusline(env, { session_id: 'sl-1', cwd: '/tmp', workspace: { current_dir: '/tmp' } });
    expect(line).toBe('cairn ● 7 remembered · 1 recalled · 0 waiting · ok\n');
  });

  it("says how many memories the session used and how many were stale, from the server's receipts, and names the session when it injects", async () => {
    const { env } = machine(server.url);
    observations = 2;
    memories = { used: 14, stale: 2 };
    server.context.index = '<cairn-context>\nindex\n</cairn-context>';
    await hook(env, 'session-start', { session_id: 'sl-m', cwd: tempDir(), source: 'startup' });
    const start = server.requests.find((r) => r.path.startsWith('/api/context'));
    expect(start?.path.includes('session=sl-m') || start?.body.includes('"session":"sl-m"')).toBe(true);
    const line = await statusline(env, { session_id: 'sl-m' });
    expect(line).toBe('cairn ● 2 remembered · 14 memories used, 2 stale · 0 waiting · ok\n');
  });

  it('asks the server at most once in STALE_MS: later refreshes read the cached answer', async () => {
    const { env } = machine(server.url);
    const t0 = Date.now();
    observations = 3;
    await statusline(env, { session_id: 'sl-2' }, t0);
    observations = 5;
    expect(await statusline(env, { session_id: 'sl-2' }, t0 + 5_000)).toContain('3 remembered');
    expect(await statusline(env, { session_id: 'sl-2' }, t0 + 10_000)).toContain('3 remembered');
    expect(network().filter((r) => r.path.startsWith('/api/context/session'))).toHaveLength(1);
    expect(await statusline(env, { session_id: 'sl-2' }, t0 + 31_000)).toContain('5 remembered');
    expect(network().filter((r) => r.path.startsWith('/api/context/session'))).toHaveLength(2);
  });

  it("shows the observer paused with the server's code, and a server it cannot reach, without failing", async () => {
    const { env } = machine(server.url);
    observerState = {
      state: 'failing',
      code: 'observer_key_refused',
      notice: 'Memory is paused: the observer key was refused.',
    };
    expect(await statusline(env, { session_id: 'sl-3' })).toContain('memory paused: observer_key_refused');
    const offline = machine('http://127.0.0.1:9').env;
    expect(await statusline(offline, { session_id: 'sl-3' })).toContain(
      '? remembered · 0 recalled · 0 waiting · server unreachable',
    );
  });

  it('says it is paused, for this session or this folder, with the time left', async () => {
    const { env } = machine(server.url);
    const folder = tempDir();
    const t0 = Date.now();
    expect(await run(['pause', '--session', 'sl-4'], memIo({ env, now: () => t0 }))).toBe(0);
    expect(await statusline(env, { session_id: 'sl-4', cwd: folder }, t0 + 1)).toContain(
      'paused (this session, until resumed)',
    );
    expect(await run(['resume', '--session', 'sl-4'], memIo({ env, now: () => t0 + 2 }))).toBe(0);
    expect(await run(['pause', '2'], memIo({ env, cwd: folder, now: () => t0 + 3 }))).toBe(0);
    expect(
      await statusline(env, { session_id: 'sl-4', workspace: { current_dir: join(folder, 'src') } }, t0 + 4),
    ).toContain('paused (this folder, 2 h left)');
  });

  it("runs the user's own status line first with the same input and appends cairn's", async () => {
    const { env } = machine(server.url);
    const wrapped = Buffer.from(
      JSON.stringify({
        type: 'command',
        command:
          "node -e \"let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log('mine:'+JSON.parse(s).session_id))\"",
      }),
    ).toString('base64url');
    const line = await statusline(env, { session_id: 'sl-5' }, Date.now(), ['--wrap', wrapped]);
    expect(line).toMatch(/^mine:sl-5 {2}cairn . \d+ remembered/);
  });
});

const THEIR_STATUS = `{
  "statusLine": {
    "type": "command",
    "command": "~/bin/my-prompt --short",
    "padding": 2
  },
  "model": "opus"
}
`;

describe('install and the status line', () => {
  function home(settings: string | null) {
    const { home, env } = machine('https://cairn.example.dev');
    env.PATH = tempDir('cairn-path-');
    mkdirSync(join(home, '.claude'), { recursive: true });
    const path = join(home, '.claude', 'settings.json');
    if (settings !== null) writeFileSync(path, settings);
    return { env, path };
  }

  it('adds a statusLine that runs cairn, with a refresh interval, and removes it (and the file it created) on uninstall', async () => {
    const { env, path } = home(null);
    expect(await run(['install', '--client', '/opt/cairn/cairn.cjs', '--no-mcp'], memIo({ env }))).toBe(0);
    const s = JSON.parse(readFileSync(path, 'utf8'));
    expect(s.statusLine).toEqual({
      type: 'command',
      command: 'node "/opt/cairn/cairn.cjs" statusline',
      refreshInterval: 15,
    });
    expect(s.hooks.PreCompact[0].hooks[0].args).toEqual(['/opt/cairn/cairn.cjs', 'hook', 'pre-compact']);
    expect(await run(['uninstall'], memIo({ env }))).toBe(0);
    expect(existsSync(path)).toBe(false);
  });

  it("wraps the user's own status line, keeps their padding, and gives their settings back byte for byte", async () => {
    const { env, path } = home(THEIR_STATUS);
    expect(await run(['install', '--client', '/opt/cairn/cairn.cjs', '--no-mcp'], memIo({ env }))).toBe(0);
    const s = JSON.parse(readFileSync(path, 'utf8'));
    expect(s.statusLine.command).toMatch(/^node "\/opt\/cairn\/cairn\.cjs" statusline --wrap [A-Za-z0-9_-]+$/);
    expect(s.statusLine.padding).toBe(2);
    const carried = JSON.parse(Buffer.from(s.statusLine.command.split(' ').at(-1), 'base64url').toString('utf8'));
    expect(carried).toEqual({ type: 'command', command: '~/bin/my-prompt --short', padding: 2 });
    // A second install wraps the user's line, not cairn's own.
    expect(await run(['install', '--client', '/opt/cairn/cairn.cjs', '--no-mcp'], memIo({ env }))).toBe(0);
    expect(JSON.parse(readFileSync(path, 'utf8')).statusLine).toEqual(s.statusLine);
    expect(await run(['uninstall'], memIo({ env }))).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe(THEIR_STATUS);
  });

  it('--no-statusline installs the hooks only', async () => {
    const { env, path } = home(THEIR_STATUS);
    expect(
      await run(['install', '--client', '/opt/cairn/cairn.cjs', '--no-mcp', '--no-statusline'], memIo({ env })),
    ).toBe(0);
    expect(JSON.parse(readFileSync(path, 'utf8')).statusLine).toEqual({
      type: 'command',
      command: '~/bin/my-prompt --short',
      padding: 2,
    });
  });
});

describe('pause', () => {
  const tool = (cwd: string, id: string, session = 'pz-1') => ({
    session_id: session,
    cwd,
    tool_name: 'Bash',
    tool_input: { command: 'ls' },
    tool_response: 'a',
    tool_use_id: id,
  });
  const sentIds = () =>
    server.requests
      .filter((r) => r.method === 'POST')
      .flatMap((r) => (Array.isArray(r.json?.events) ? (r.json!.events as Array<Record<string, unknown>>) : [r.json!]))
      .map((e) => e.tool_use_id ?? e.kind);

  it('records nothing of a paused session until it is resumed, and still recalls', async () => {
    const { env } = machine(server.url);
    const cwd = tempDir();
    const t0 = Date.now();
    expect(await run(['pause', '--session', 'pz-1'], memIo({ env, now: () => t0 }))).toBe(0);
    server.context.index = '<cairn-context>\nstill recalled\n</cairn-context>';
    expect(await hook(env, 'session-start', { session_id: 'pz-1', cwd, source: 'resume' }, t0 + 1)).toContain(
      'still recalled',
    );
    await hook(env, 'user-prompt-submit', { session_id: 'pz-1', cwd, prompt: 'a paused prompt' }, t0 + 2);
    await hook(env, 'post-tool-use', tool(cwd, 'while-paused'), t0 + 3);
    await hook(env, 'stop', { session_id: 'pz-1', cwd, last_assistant_message: 'paused summary' }, t0 + 4);
    await hook(env, 'post-tool-use', tool(cwd, 'other-session', 'pz-2'), t0 + 5);
    expect(await run(['resume', '--session', 'pz-1'], memIo({ env, now: () => t0 + 6 }))).toBe(0);
    await hook(env, 'post-tool-use', tool(cwd, 'after-resume'), t0 + 7);
    expect(sentIds()).toEqual(['other-session', 'after-resume']);
    expect(JSON.stringify(server.requests)).not.toContain('a paused prompt');
  });

  it('pauses a folder and everything under it for N hours, then records again', async () => {
    const { env } = machine(server.url);
    const folder = tempDir();
    const t0 = Date.now();
    expect(await run(['pause', 'folder', '1'], memIo({ env, cwd: folder, now: () => t0 }))).toBe(0);
    await hook(env, 'post-tool-use', tool(join(folder, 'sub'), 'in-folder'), t0 + 1);
    await hook(env, 'post-tool-use', tool(tempDir(), 'elsewhere'), t0 + 2);
    await hook(env, 'post-tool-use', tool(folder, 'an-hour-later'), t0 + 3_600_001);
    expect(sentIds()).toEqual(['elsewhere', 'an-hour-later']);
  });

  it('refuses words it does not know and hours out of range', async () => {
    const { env } = machine(server.url);
    const io = memIo({ env });
    expect(await run(['pause', 'forever'], io)).toBe(2);
    expect(await run(['pause', '--hours', '0'], io)).toBe(2);
    expect(io.stderr).toContain('neither a number of hours');
  });
});

describe('compaction', () => {
  it('SessionStart after a compaction puts this session so far before the index, within one budget', async () => {
    const { env } = machine(server.url);
    soFar = `<cairn-session-so-far>\n# This session so far\n41 10:02 🔴 Fixed the login race\n</cairn-session-so-far>`;
    server.context.index = `<cairn-context>\n${'x'.repeat(12_000)}\n</cairn-context>`;
    const text = await hook(env, 'session-start', { session_id: 'cp-1', cwd: tempDir(), source: 'compact' });
    expect(text.startsWith('<cairn-session-so-far>')).toBe(true);
    expect(text.indexOf('<cairn-context>')).toBeGreaterThan(text.indexOf('</cairn-session-so-far>'));
    expect(text.length).toBeLessThanOrEqual(MAX_CONTEXT_CHARS);
    expect(text.endsWith('</cairn-context>')).toBe(true);
    expect(server.requests.some((r) => r.path.startsWith('/api/context/session?session=cp-1&format=text'))).toBe(true);
  });

  it('a start that is not a compaction asks for no block', async () => {
    const { env } = machine(server.url);
    soFar = '<cairn-session-so-far>\nshould not appear\n</cairn-session-so-far>';
    server.context.index = '<cairn-context>\nindex\n</cairn-context>';
    expect(await hook(env, 'session-start', { session_id: 'cp-2', cwd: tempDir(), source: 'startup' })).not.toContain(
      'so-far',
    );
    expect(server.requests.some((r) => r.path.startsWith('/api/context/session'))).toBe(false);
  });

  it('PreCompact sends what waits and keeps the block, which SessionStart uses when the server is gone', async () => {
    const { env } = machine(server.url);
    const cwd = tempDir();
    server.handler = undefined;
    const saved = server.handler;
    // Offline first: an event waits in the spool.
    const offline = { ...env, CAIRN_URL: 'http://127.0.0.1:9' };
    await hook(offline, 'post-tool-use', {
      session_id: 'cp-3',
      cwd,
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_response: 'a',
      tool_use_id: 'waiting-1',
    });
    server.handler = (req, res) => {
      if (!req.path.startsWith('/api/context/session?')) return false;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('<cairn-session-so-far>\nkept by pre-compact\n</cairn-session-so-far>');
      return true;
    };
    await hook(env, 'pre-compact', { session_id: 'cp-3', cwd, trigger: 'manual' });
    expect(JSON.stringify(server.requests.filter((r) => r.method === 'POST'))).toContain('waiting-1');
    server.handler = saved;
    const text = await hook(offline, 'session-start', { session_id: 'cp-3', cwd, source: 'compact' });
    expect(text).toContain('kept by pre-compact');
  });
});

describe('slash commands and the skill', () => {
  function home() {
    const { home, env } = machine('https://cairn.example.dev');
    env.PATH = tempDir('cairn-path-');
    return { home, env, claude: join(home, '.claude') };
  }

  it('installs /cairn:* commands and the cairn-memory skill naming the installed client, and takes every file and folder out again', async () => {
    const { env, claude } = home();
    expect(await run(['install', '--client', '/opt/cairn/cairn.cjs', '--no-mcp'], memIo({ env }))).toBe(0);
    const pause = readFileSync(join(claude, 'commands', 'cairn', 'pause.md'), 'utf8');
    expect(pause).toContain('!`node "/opt/cairn/cairn.cjs" pause --session "${CLAUDE_SESSION_ID}" $ARGUMENTS`');
    expect(pause).toContain('disable-model-invocation: true');
    for (const f of ['status.md', 'resume.md', 'forget.md', 'remember.md', 'prime.md', 'handoff.md', 'promote.md'])
      expect(existsSync(join(claude, 'commands', 'cairn', f)), f).toBe(true);
    expect(readFileSync(join(claude, 'skills', 'cairn-memory', 'SKILL.md'), 'utf8')).toMatch(
      /^---\nname: cairn-memory\ndescription: /,
    );
    expect(await run(['uninstall'], memIo({ env }))).toBe(0);
    expect(existsSync(join(claude, 'commands'))).toBe(false);
    expect(existsSync(join(claude, 'skills'))).toBe(false);
  });

  it("leaves a command file of the user's own, and one they edited after install, where it is", async () => {
    const { env, claude } = home();
    mkdirSync(join(claude, 'commands', 'cairn'), { recursive: true });
    writeFileSync(join(claude, 'commands', 'cairn', 'status.md'), 'my own status command\n');
    expect(await run(['install', '--client', '/opt/cairn/cairn.cjs', '--no-mcp'], memIo({ env }))).toBe(0);
    expect(readFileSync(join(claude, 'commands', 'cairn', 'status.md'), 'utf8')).toBe('my own status command\n');
    writeFileSync(join(claude, 'commands', 'cairn', 'resume.md'), 'edited by the user\n');
    expect(await run(['uninstall'], memIo({ env }))).toBe(0);
    expect(readFileSync(join(claude, 'commands', 'cairn', 'status.md'), 'utf8')).toBe('my own status command\n');
    expect(readFileSync(join(claude, 'commands', 'cairn', 'resume.md'), 'utf8')).toBe('edited by the user\n');
    expect(existsSync(join(claude, 'commands', 'cairn', 'pause.md'))).toBe(false);
  });
});

describe('cairn why', () => {
  const memory = (id: number, value: string, reasons: string[], fetched: boolean) => ({
    id,
    title: `Record ${id}`,
    type: 'decision',
    project: 'github.com/acme/app',
    author: 'ada',
    created_at: '2026-11-30T10:02:00.000Z',
    channels: ['index', 'mcp'],
    evidence: { value, reasons },
    sent: 2,
    first_sent_at: '2026-12-01T09:00:00.000Z',
    last_sent_at: '2026-12-01T09:05:00.000Z',
    fetched_at: fetched ? '2026-12-01T09:06:00.000Z' : null,
  });

  it("lists the session's memories with the evidence each was sent with, asking for the session it is given", async () => {
    const { env } = machine(server.url);
    receipts = {
      session: 'why-1',
      project: 'github.com/acme/app',
      started_at: '2026-12-01T09:00:00.000Z',
      used: 2,
      stale: 1,
      memories: [memory(12, 'changed', ['code_changed'], true), memory(13, 'current', [], false)],
    };
    const io = memIo({ env });
    expect(await run(['why', 'why-1'], io)).toBe(0);
    expect(server.requests.find((r) => r.path.startsWith('/api/receipts?'))?.path).toBe('/api/receipts?session=why-1');
    expect(io.stdout.split('\n')).toEqual([
      'cairn why: session why-1 (github.com/acme/app), started 2026-12-01 09:00 UTC',
      '2 memories used, 1 stale (code changed or gone when sent)',
      '#12  index, mcp  changed (code_changed)  Record 12  (@ada, 2026-11-30 10:02)  fetched',
      '#13  index, mcp  current  Record 13  (@ada, 2026-11-30 10:02)',
      '',
    ]);
  });

  it('asks for the latest session in this checkout without one, and refuses two sessions with a usage error', async () => {
    const { env } = machine(server.url);
    receipts = { session: null, project: null, started_at: null, used: 0, stale: 0, memories: [] };
    const io = memIo({ env, cwd: tempDir() });
    expect(await run(['why'], io)).toBe(0);
    expect(server.requests.find((r) => r.path.startsWith('/api/receipts?'))?.path).toMatch(
      /^\/api\/receipts\?project=/,
    );
    expect(io.stdout).toBe('cairn why: no session of this device has asked for memory here yet.\n');
    const bad = memIo({ env });
    expect(await run(['why', 'a', 'b'], bad)).toBe(2);
    expect(bad.stderr).toContain('usage: cairn why');
  });
});
