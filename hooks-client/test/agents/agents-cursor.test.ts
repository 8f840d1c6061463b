// Cursor: `cairn install --agent cursor` merges into ~/.cursor/hooks.json and ~/.cursor/mcp.json and restores
// them byte for byte; `cairn hook <event> --agent cursor` reads the payloads Cursor's own hook runner sends
// (fixtures/agents/cursor.json names where each field comes from) and stores them with platform cursor.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/run';
import { agentFixture, agentHome, fakeServer, machine, memIo, type FakeServer } from '../support';

const CURSOR = agentFixture('cursor');

let server: FakeServer;
beforeAll(async () => {
  server = await fakeServer();
});
afterAll(() => server.close());

async function hook(env: Record<string, string | undefined>, event: string, payload: unknown) {
  const io = memIo({ env, stdin: JSON.stringify(payload) });
  expect(await run(['hook', event, '--agent', 'cursor'], io)).toBe(0);
  return io;
}

const storedFor = (session: string) => [...server.stored.values()].filter((e) => e.session_id === session);

describe('cairn install --agent cursor', () => {
  // A user's own hooks (the shape of cursor/cookbook's hooks example) and MCP servers, two-space and tab indented.
  const HOOKS =
    '{\n  "version": 1,\n  "hooks": {\n    "afterFileEdit": [\n      { "command": "./hooks/format.sh", "timeout": 5, "failClosed": false }\n    ],\n    "stop": [\n      { "command": "node ./hooks/notify.mjs", "timeout": 10, "loop_limit": 1 }\n    ]\n  }\n}\n';
  const MCP =
    '{\n\t"mcpServers": {\n\t\t"playwright": { "command": "npx", "args": ["-y", "@playwright/mcp@latest"] }\n\t}\n}\n';

  function setup() {
    const m = agentHome();
    const dir = join(m.home, '.cursor');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'hooks.json'), HOOKS);
    writeFileSync(join(dir, 'mcp.json'), MCP);
    return { ...m, dir };
  }

  it('adds flat hook entries beside the user’s, a stdio MCP server without the token, and restores both files exactly', async () => {
    const { env, dir } = setup();
    const args = ['install', '--agent', 'cursor', '--client', '/opt/cairn/cairn.cjs'];
    expect(await run(args, memIo({ env }))).toBe(0);
    expect(await run(args, memIo({ env }))).toBe(0);
    const file = JSON.parse(readFileSync(join(dir, 'hooks.json'), 'utf8'));
    expect(file.version).toBe(1);
    expect(Object.keys(file.hooks).sort()).toEqual([
      'afterAgentResponse',
      'afterFileEdit',
      'beforeSubmitPrompt',
      'postToolUse',
      'postToolUseFailure',
      'preToolUse',
      'sessionEnd',
      'sessionStart',
      'stop',
    ]);
    expect(file.hooks.stop).toEqual([{ command: 'node ./hooks/notify.mjs', timeout: 10, loop_limit: 1 }]);
    expect(file.hooks.afterAgentResponse).toEqual([
      { command: 'node "/opt/cairn/cairn.cjs" hook stop --agent cursor', timeout: 10 },
    ]);
    expect(file.hooks.preToolUse).toEqual([
      { command: 'node "/opt/cairn/cairn.cjs" hook pre-tool-use --agent cursor', timeout: 5, matcher: 'Read' },
    ]);
    const mcp = JSON.parse(readFileSync(join(dir, 'mcp.json'), 'utf8'));
    expect(mcp.mcpServers.playwright.command).toBe('npx');
    expect(mcp.mcpServers.cairn).toEqual({ command: 'node', args: ['/opt/cairn/cairn.cjs', 'mcp-stdio'] });
    expect(readFileSync(join(dir, 'mcp.json'), 'utf8')).toMatch(/^\t"mcpServers"/m);
    expect(readFileSync(join(dir, 'hooks.json'), 'utf8') + readFileSync(join(dir, 'mcp.json'), 'utf8')).not.toContain(
      'tok-test',
    );
    expect(await run(['uninstall', '--agent', 'cursor'], memIo({ env }))).toBe(0);
    expect(readFileSync(join(dir, 'hooks.json'), 'utf8')).toBe(HOOKS);
    expect(readFileSync(join(dir, 'mcp.json'), 'utf8')).toBe(MCP);
  });

  it('keeps a hook the user added after install, and deletes the files it created when nothing else is in them', async () => {
    const { env, dir } = setup();
    await run(['install', '--agent', 'cursor', '--client', '/opt/cairn/cairn.cjs'], memIo({ env }));
    const file = join(dir, 'hooks.json');
    const edited = JSON.parse(readFileSync(file, 'utf8'));
    edited.hooks.beforeShellExecution = [{ command: './hooks/guard.sh' }];
    writeFileSync(file, JSON.stringify(edited, null, 2));
    await run(['uninstall', '--agent', 'cursor'], memIo({ env }));
    const left = JSON.parse(readFileSync(file, 'utf8'));
    expect(Object.keys(left.hooks).sort()).toEqual(['afterFileEdit', 'beforeShellExecution', 'stop']);
    expect(JSON.stringify(left)).not.toContain('cairn');

    const fresh = agentHome();
    expect(
      await run(['install', '--agent', 'cursor', '--client', '/opt/cairn/cairn.cjs'], memIo({ env: fresh.env })),
    ).toBe(0);
    expect(JSON.parse(readFileSync(join(fresh.home, '.cursor', 'hooks.json'), 'utf8')).version).toBe(1);
    expect(await run(['uninstall', '--agent', 'cursor'], memIo({ env: fresh.env }))).toBe(0);
    expect(existsSync(join(fresh.home, '.cursor', 'hooks.json'))).toBe(false);
    expect(existsSync(join(fresh.home, '.cursor', 'mcp.json'))).toBe(false);
  });
});

describe('cairn hook --agent cursor (payloads of Cursor’s hook runner, @cursor/sdk 1.0.32)', () => {
  it('records prompt, tool calls, a failed command, the answer and the end with platform cursor', async () => {
    const { env } = machine(server.url);
    const session = CURSOR.sessionStart!.conversation_id as string;
    await hook(env, 'user-prompt-submit', CURSOR.beforeSubmitPrompt);
    await hook(env, 'post-tool-use', CURSOR.postToolUseShell);
    await hook(env, 'post-tool-use', CURSOR.postToolUseWrite);
    await hook(env, 'post-tool-use-failure', CURSOR.postToolUseFailure);
    await hook(env, 'stop', CURSOR.afterAgentResponse);
    await hook(env, 'session-end', CURSOR.sessionEnd);
    const events = storedFor(session);
    expect(events.map((e) => e.kind)).toEqual([
      'init',
      'observation',
      'observation',
      'observation',
      'summarize',
      'end',
    ]);
    expect(events.every((e) => e.platform === 'cursor')).toBe(true);
    expect(events[0]!.prompt).toBe('Make the widget build green again');
    expect(events[1]).toMatchObject({
      tool_name: 'Bash',
      tool_input: { command: 'npm test' },
      tool_response: 'PASS src/widget.test.ts (12 tests)\n',
      tool_use_id: 'tool_01HRE',
      cwd: '/work/widgets/packages/core',
    });
    expect(events[2]).toMatchObject({
      tool_name: 'Write',
      tool_input: { file_path: '/work/widgets/src/widget.ts' },
      cwd: '/work/widgets',
    });
    expect(events[3]).toMatchObject({
      tool_name: 'Bash',
      tool_input: { command: 'npm run lint' },
      tool_response: { is_error: true, error: 'Command failed with exit code 1' },
    });
    expect(events[4]!.last_assistant_message).toBe('The widget build is green: npm test passes.');
    expect(events[5]!.reason).toBe('completed');
  });

  it('answers sessionStart, beforeSubmitPrompt and a Read’s preToolUse with a top-level additional_context', async () => {
    const { env, home } = machine(server.url);
    server.context.index = '<cairn-context>widgets index</cairn-context>';
    server.context.prompt = '<cairn-context>related: the stale snapshot</cairn-context>';
    server.context.file = '<cairn-context>widget.ts: flaky on CI</cairn-context>';
    const start = await hook(env, 'session-start', CURSOR.sessionStart);
    expect(JSON.parse(start.stdout)).toEqual({ additional_context: '<cairn-context>widgets index</cairn-context>' });
    env.CAIRN_PROMPT_CONTEXT = '1';
    const prompt = await hook(env, 'user-prompt-submit', {
      ...CURSOR.beforeSubmitPrompt,
      conversation_id: 'cur-ctx',
      session_id: 'cur-ctx',
    });
    expect(JSON.parse(prompt.stdout)).toEqual({
      additional_context: '<cairn-context>related: the stale snapshot</cairn-context>',
    });
    // The file must exist and be big enough for file notes (cairn asks only about files worth a note).
    const file = join(home, 'widget.ts');
    writeFileSync(file, 'export const widget = 1;\n'.repeat(400));
    const read = await hook(env, 'pre-tool-use', {
      ...CURSOR.preToolUseRead,
      tool_input: { file_path: file },
      workspace_roots: [home],
    });
    expect(JSON.parse(read.stdout)).toEqual({
      additional_context: '<cairn-context>widget.ts: flaky on CI</cairn-context>',
    });
  });

  it('reads a Claude Code hook that Cursor runs (its payload has cursor_version) as Cursor’s, and skips it when cairn’s Cursor hooks record the session', async () => {
    const { env } = machine(server.url);
    const viaClaude = async (payload: Record<string, unknown>) =>
      expect(await run(['hook', 'post-tool-use'], memIo({ env, stdin: JSON.stringify(payload) }))).toBe(0);
    await viaClaude({
      ...CURSOR.postToolUseShell,
      conversation_id: 'cur-claude-1',
      session_id: 'cur-claude-1',
      tool_use_id: 'tool_cc1',
    });
    expect(storedFor('cur-claude-1')).toMatchObject([
      { platform: 'cursor', tool_name: 'Bash', tool_response: 'PASS src/widget.test.ts (12 tests)\n' },
    ]);
    // Claude Code's own payload that merely mentions the field stays Claude Code's.
    await viaClaude({
      session_id: 'cc-real-1',
      cwd: '/work/widgets',
      tool_name: 'Read',
      tool_input: { file_path: '/work/widgets/hooks.json' },
      tool_response: '{"cursor_version": "2.6.11"}',
      tool_use_id: 'tool_cc2',
    });
    expect(storedFor('cc-real-1')).toMatchObject([{ platform: 'claude-code', tool_name: 'Read' }]);
    expect(await run(['install', '--agent', 'cursor', '--client', '/opt/cairn/cairn.cjs'], memIo({ env }))).toBe(0);
    await viaClaude({
      ...CURSOR.postToolUseShell,
      conversation_id: 'cur-claude-2',
      session_id: 'cur-claude-2',
      tool_use_id: 'tool_cc3',
    });
    expect(storedFor('cur-claude-2')).toEqual([]);
  });
});
