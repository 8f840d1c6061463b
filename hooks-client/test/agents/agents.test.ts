// Other agents: `cairn install --agent codex|gemini` merges into that agent's own files and restores them byte
// for byte; `cairn hook <event> --agent NAME` reads the agent's documented payloads (fixtures transcribed from
// its source, cited in each fixture's "source") and records them with the agent as the platform.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/run';
import { agentFixture, agentHome as home, fakeServer, machine, memIo, tempDir, type FakeServer } from '../support';

const CODEX = agentFixture('codex');
const GEMINI = agentFixture('gemini');

let server: FakeServer;
beforeAll(async () => {
  server = await fakeServer();
});
afterAll(() => server.close());

async function hook(env: Record<string, string | undefined>, event: string, agent: string, payload: unknown) {
  const io = memIo({ env, stdin: JSON.stringify(payload) });
  expect(await run(['hook', event, '--agent', agent], io)).toBe(0);
  return io;
}

/** The events the fake server stored for one session, oldest first. */
const storedFor = (session: string) => [...server.stored.values()].filter((e) => e.session_id === session);

describe('cairn install --agent codex', () => {
  const CONFIG = '# my codex settings\nmodel = "gpt-5-codex"\n\n[mcp_servers.github]\ncommand = "github-mcp"\n';
  const HOOKS =
    '{\n  "hooks": {\n    "Stop": [ { "hooks": [ { "type": "command", "command": "notify-send done", "timeout": 5 } ] } ]\n  }\n}\n';

  function setup() {
    const m = home();
    const dir = join(m.home, '.codex');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'config.toml'), CONFIG);
    writeFileSync(join(dir, 'hooks.json'), HOOKS);
    return { ...m, dir };
  }

  it('adds its hooks beside the user’s, the MCP server as a stdio bridge without the token, and restores both files exactly', async () => {
    const { env, dir } = setup();
    const args = ['install', '--agent', 'codex', '--client', '/opt/cairn/cairn.cjs'];
    expect(await run(args, memIo({ env }))).toBe(0);
    expect(await run(args, memIo({ env }))).toBe(0);
    const hooks = JSON.parse(readFileSync(join(dir, 'hooks.json'), 'utf8')).hooks;
    expect(Object.keys(hooks).sort()).toEqual(['PostToolUse', 'SessionStart', 'Stop', 'UserPromptSubmit']);
    expect(hooks.Stop).toHaveLength(2);
    expect(hooks.Stop[0].hooks[0].command).toBe('notify-send done');
    expect(hooks.Stop[1].hooks[0]).toEqual({
      type: 'command',
      command: 'node "/opt/cairn/cairn.cjs" hook stop --agent codex',
      timeout: 10,
    });
    expect(hooks.SessionStart[0].matcher).toBe('startup|resume|clear');
    const toml = readFileSync(join(dir, 'config.toml'), 'utf8');
    expect(toml.startsWith(CONFIG)).toBe(true);
    expect(toml).toContain('[mcp_servers.cairn]\ncommand = "node"\nargs = ["/opt/cairn/cairn.cjs", "mcp-stdio"]\n');
    expect(toml.match(/\[mcp_servers\.cairn\]/g)).toHaveLength(1);
    expect(toml + JSON.stringify(hooks)).not.toContain('tok-test');
    expect(await run(['uninstall', '--agent', 'codex'], memIo({ env }))).toBe(0);
    expect(readFileSync(join(dir, 'config.toml'), 'utf8')).toBe(CONFIG);
    expect(readFileSync(join(dir, 'hooks.json'), 'utf8')).toBe(HOOKS);
  });

  it('keeps what the user added to config.toml after install, and touches nothing when the block lost its end marker', async () => {
    const { env, dir } = setup();
    await run(['install', '--agent', 'codex', '--client', '/opt/cairn/cairn.cjs'], memIo({ env }));
    const file = join(dir, 'config.toml');
    writeFileSync(file, `${readFileSync(file, 'utf8')}\n[profiles.fast]\nmodel = "o4-mini"\n`);
    expect(await run(['uninstall', '--agent', 'codex'], memIo({ env }))).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(`${CONFIG}\n[profiles.fast]\nmodel = "o4-mini"\n`);
    await run(['install', '--agent', 'codex', '--client', '/opt/cairn/cairn.cjs'], memIo({ env }));
    const damaged = readFileSync(file, 'utf8').replace('# <<< cairn\n', '');
    writeFileSync(file, damaged);
    await run(['uninstall', '--agent', 'codex'], memIo({ env }));
    expect(readFileSync(file, 'utf8')).toBe(damaged);
  });

  it('honours CODEX_HOME and removes the files it created', async () => {
    const { env } = home();
    const dir = tempDir('cairn-codex-home-');
    env.CODEX_HOME = dir;
    expect(await run(['install', '--agent', 'codex', '--client', '/opt/cairn/cairn.cjs'], memIo({ env }))).toBe(0);
    expect(existsSync(join(dir, 'hooks.json'))).toBe(true);
    expect(await run(['uninstall', '--agent', 'codex'], memIo({ env }))).toBe(0);
    expect(existsSync(join(dir, 'hooks.json'))).toBe(false);
    expect(existsSync(join(dir, 'config.toml'))).toBe(false);
  });

  it('refuses an unknown agent and --project for an agent other than Claude Code', async () => {
    const { env } = home();
    const io = memIo({ env });
    expect(await run(['install', '--agent', 'vim'], io)).toBe(2);
    expect(io.stderr).toContain('unknown agent "vim"');
    expect(await run(['install', '--agent', 'codex', '--project'], memIo({ env }))).toBe(2);
  });
});

describe('cairn install --agent gemini', () => {
  const SETTINGS =
    '{\n    "theme": "GitHub",\n    "mcpServers": {\n        "github": { "httpUrl": "https://api.githubcopilot.com/mcp/" }\n    },\n    "hooks": {\n        "BeforeTool": [ { "matcher": "write_file", "hooks": [ { "type": "command", "command": "./guard.sh", "timeout": 5000 } ] } ]\n    }\n}\n';

  it('merges hooks (timeouts in milliseconds) and a stdio MCP server into settings.json, and restores it exactly', async () => {
    const { env, home: h } = home();
    const file = join(h, '.gemini', 'settings.json');
    mkdirSync(join(h, '.gemini'), { recursive: true });
    writeFileSync(file, SETTINGS);
    expect(await run(['install', '--agent', 'gemini', '--client', '/opt/cairn/cairn.cjs'], memIo({ env }))).toBe(0);
    const s = JSON.parse(readFileSync(file, 'utf8'));
    expect(s.theme).toBe('GitHub');
    expect(Object.keys(s.hooks).sort()).toEqual([
      'AfterAgent',
      'AfterTool',
      'BeforeAgent',
      'BeforeTool',
      'SessionEnd',
      'SessionStart',
    ]);
    expect(s.hooks.AfterTool[0]).toEqual({
      matcher: '.*',
      hooks: [
        { type: 'command', command: 'node "/opt/cairn/cairn.cjs" hook post-tool-use --agent gemini', timeout: 10_000 },
      ],
    });
    expect(s.mcpServers.github.httpUrl).toBe('https://api.githubcopilot.com/mcp/');
    expect(s.mcpServers.cairn).toEqual({ command: 'node', args: ['/opt/cairn/cairn.cjs', 'mcp-stdio'] });
    expect(readFileSync(file, 'utf8')).not.toContain('tok-test');
    expect(readFileSync(file, 'utf8')).toMatch(/^ {4}"theme"/m);
    expect(await run(['uninstall', '--agent', 'gemini'], memIo({ env }))).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(SETTINGS);
  });
});

describe('cairn hook --agent codex (payloads of openai/codex hooks schema)', () => {
  it('records prompt, tool call and turn end with platform codex, read exactly as Codex sends them', async () => {
    const { env } = machine(server.url);
    const session = CODEX.SessionStart!.session_id as string;
    server.context.index = '<cairn-context>widgets: the build broke on a stale snapshot</cairn-context>';
    const start = await hook(env, 'session-start', 'codex', CODEX.SessionStart);
    expect(JSON.parse(start.stdout)).toEqual({
      hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: server.context.index },
    });
    await hook(env, 'user-prompt-submit', 'codex', CODEX.UserPromptSubmit);
    await hook(env, 'post-tool-use', 'codex', CODEX.PostToolUse);
    await hook(env, 'stop', 'codex', CODEX.Stop);
    const events = storedFor(session);
    expect(events.map((e) => e.kind)).toEqual(['init', 'observation', 'summarize']);
    expect(events.every((e) => e.platform === 'codex')).toBe(true);
    expect(events[0]!.prompt).toBe('Make the widget build green again');
    expect(events[1]).toMatchObject({
      tool_name: 'Bash',
      tool_input: { command: 'npm test' },
      tool_response: 'FAIL src/widget.test.ts',
      tool_use_id: 'call_7Qx2',
      cwd: '/work/widgets',
    });
    expect(events[2]!.last_assistant_message).toBe('The widget build is green: npm test passes.');
  });
});

describe('cairn hook --agent gemini (payloads of gemini-cli docs/hooks/reference.md)', () => {
  it('maps BeforeAgent, AfterTool, AfterAgent and SessionEnd onto cairn’s events with platform gemini', async () => {
    const { env } = machine(server.url);
    const session = GEMINI.SessionStart!.session_id as string;
    await hook(env, 'user-prompt-submit', 'gemini', GEMINI.BeforeAgent);
    await hook(env, 'post-tool-use', 'gemini', GEMINI.AfterToolError);
    await hook(env, 'post-tool-use', 'gemini', GEMINI.AfterTool);
    await hook(env, 'stop', 'gemini', GEMINI.AfterAgent);
    await hook(env, 'session-end', 'gemini', GEMINI.SessionEnd);
    const events = storedFor(session);
    expect(events.map((e) => e.kind)).toEqual(['init', 'observation', 'observation', 'summarize', 'end']);
    expect(events.every((e) => e.platform === 'gemini')).toBe(true);
    expect(events[1]).toMatchObject({
      tool_name: 'Edit',
      tool_input: { file_path: '/work/widgets/src/widget.ts' },
      tool_response: { is_error: true, error: 'old_string was not found in /work/widgets/src/widget.ts' },
    });
    expect(events[2]).toMatchObject({
      tool_name: 'Bash',
      tool_input: { command: 'npm test' },
      tool_response: 'PASS src/widget.test.ts (12 tests)',
    });
    expect(events[3]!.last_assistant_message).toBe('The widget build is green: npm test passes.');
    expect(events[4]!.reason).toBe('exit');
  });

  it('injects context the way Gemini reads it: SessionStart and BeforeAgent hookSpecificOutput.additionalContext', async () => {
    const { env } = machine(server.url);
    server.context.index = '<cairn-context>widgets index</cairn-context>';
    server.context.prompt = '<cairn-context>related: the stale snapshot</cairn-context>';
    const start = await hook(env, 'session-start', 'gemini', GEMINI.SessionStart);
    expect(JSON.parse(start.stdout)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'SessionStart',
        additionalContext: '<cairn-context>widgets index</cairn-context>',
      },
    });
    env.CAIRN_PROMPT_CONTEXT = '1';
    const prompt = await hook(env, 'user-prompt-submit', 'gemini', { ...GEMINI.BeforeAgent, session_id: 'gem-ctx' });
    expect(JSON.parse(prompt.stdout)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'BeforeAgent',
        additionalContext: '<cairn-context>related: the stale snapshot</cairn-context>',
      },
    });
  });

  it('never fails the agent on an unknown agent name or a payload that is not JSON', async () => {
    const { env } = machine(server.url);
    const io = memIo({ env, stdin: 'not json' });
    expect(await run(['hook', 'post-tool-use', '--agent', 'gemini'], io)).toBe(0);
    const unknown = memIo({ env, stdin: '{}' });
    expect(await run(['hook', 'stop', '--agent', 'emacs'], unknown)).toBe(0);
    expect(unknown.stderr).toContain('unknown agent "emacs"');
    expect(unknown.stdout).toBe('');
  });
});
