// OpenCode: `cairn install --agent opencode` writes a plugin into OpenCode's plugin folder and the MCP server into
// its opencode.json (restored byte for byte); the plugin hands OpenCode's hook arguments and bus events (shapes
// from @opencode-ai/plugin and @opencode-ai/sdk, fixtures/agents/opencode.json) to the real built client, which
// stores them with platform opencode.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClient } from '../../build.mjs';
import { run } from '../../src/run';
import { agentFixture, agentHome, fakeServer, machine, memIo, tempDir, type FakeServer } from '../support';

const FIXTURE = agentFixture('opencode');
/** The fixture under a fresh session id (the fake server's storage outlives each test). */
const withSession = (id: string): typeof FIXTURE =>
  JSON.parse(JSON.stringify(FIXTURE).replaceAll('ses_5b1c0opencode', id));
let OC = withSession('ses_hook');
const DIR = FIXTURE.directory as unknown as string;
/** One hook's two arguments as the fixture holds them. */
const call = (name: string) => OC[name] as { input: Record<string, unknown>; output: Record<string, unknown> };
type Hook = (...args: unknown[]) => Promise<void>;
const CLIENT = new URL('../../dist/cairn.cjs', import.meta.url).pathname;

let server: FakeServer;
beforeAll(async () => {
  server = await fakeServer();
  await buildClient({ quiet: true });
}, 120_000);
afterAll(() => server.close());

const storedFor = (session: string) => [...server.stored.values()].filter((e) => e.session_id === session);

/** Polls until `check` holds: the plugin's child processes report back in their own time. */
async function until<T>(check: () => T | undefined | false, what: string): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = check();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never happened: ${what}`);
}

describe('cairn install --agent opencode', () => {
  const CONFIG =
    '{\n  "$schema": "https://opencode.ai/config.json",\n  "theme": "tokyonight",\n  "plugin": ["opencode-wakatime"],\n  "mcp": {\n    "context7": { "type": "remote", "url": "https://mcp.context7.com/mcp" }\n  }\n}\n';

  it('writes its plugin and a local MCP server without the token, and restores opencode.json exactly', async () => {
    const { env, home } = agentHome();
    const dir = join(home, '.config', 'opencode');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'opencode.json'), CONFIG);
    const args = ['install', '--agent', 'opencode', '--client', '/opt/cairn/cairn.cjs'];
    expect(await run(args, memIo({ env }))).toBe(0);
    expect(await run(args, memIo({ env }))).toBe(0);
    const config = JSON.parse(readFileSync(join(dir, 'opencode.json'), 'utf8'));
    expect(config.plugin).toEqual(['opencode-wakatime']);
    expect(config.mcp.context7.url).toBe('https://mcp.context7.com/mcp');
    expect(config.mcp.cairn).toEqual({
      type: 'local',
      command: ['node', '/opt/cairn/cairn.cjs', 'mcp-stdio'],
      enabled: true,
    });
    const plugin = readFileSync(join(dir, 'plugins', 'cairn.js'), 'utf8');
    expect(plugin).toContain('const CLIENT = "/opt/cairn/cairn.cjs";');
    expect(plugin + JSON.stringify(config)).not.toContain('tok-test');
    expect(await run(['uninstall', '--agent', 'opencode'], memIo({ env }))).toBe(0);
    expect(readFileSync(join(dir, 'opencode.json'), 'utf8')).toBe(CONFIG);
    expect(existsSync(join(dir, 'plugins', 'cairn.js'))).toBe(false);
  });

  it('honours XDG_CONFIG_HOME and leaves a plugin file that is not cairn’s alone', async () => {
    const { env } = agentHome();
    env.XDG_CONFIG_HOME = tempDir('cairn-xdg-');
    const dir = join(env.XDG_CONFIG_HOME, 'opencode');
    expect(await run(['install', '--agent', 'opencode', '--client', '/opt/cairn/cairn.cjs'], memIo({ env }))).toBe(0);
    expect(existsSync(join(dir, 'plugins', 'cairn.js'))).toBe(true);
    expect(await run(['uninstall', '--agent', 'opencode'], memIo({ env }))).toBe(0);
    expect(existsSync(join(dir, 'plugins', 'cairn.js'))).toBe(false);
    expect(existsSync(join(dir, 'opencode.json'))).toBe(false);
    const mine = 'export const Mine = async () => ({});\n';
    mkdirSync(join(dir, 'plugins'), { recursive: true });
    writeFileSync(join(dir, 'plugins', 'cairn.js'), mine);
    await run(['uninstall', '--agent', 'opencode'], memIo({ env }));
    expect(readFileSync(join(dir, 'plugins', 'cairn.js'), 'utf8')).toBe(mine);
  });
});

describe('cairn hook --agent opencode (the plugin’s payloads: @opencode-ai/plugin 1.18.33 hook arguments)', () => {
  it('maps chat.message, tool.execute.after, the idle answer and the deleted session onto cairn’s events', async () => {
    const { env } = machine(server.url);
    const session = call('chatMessage').input.sessionID as string;
    const hook = async (event: string, payload: unknown) => {
      const io = memIo({ env, stdin: JSON.stringify(payload) });
      expect(await run(['hook', event, '--agent', 'opencode'], io)).toBe(0);
      return io;
    };
    await hook('user-prompt-submit', { directory: DIR, ...OC.chatMessage });
    await hook('post-tool-use', { directory: DIR, ...OC.toolEdit });
    await hook('stop', { directory: DIR, sessionID: session, text: 'The widget build is green: npm test passes.' });
    await hook('session-end', { directory: DIR, sessionID: session, reason: 'deleted' });
    const events = storedFor(session);
    expect(events.map((e) => e.kind)).toEqual(['init', 'observation', 'summarize', 'end']);
    expect(events.every((e) => e.platform === 'opencode' && e.cwd === '/work/widgets')).toBe(true);
    // The synthetic part (a file's contents OpenCode attached) is not the user's prompt.
    expect(events[0]!.prompt).toBe('Make the widget build green again');
    expect(events[1]).toMatchObject({
      tool_name: 'Edit',
      tool_input: { file_path: '/work/widgets/src/widget.ts', old_string: "'red'", new_string: "'green'" },
      tool_response: 'Edit applied successfully.',
      tool_use_id: 'toolu_01edit',
    });
    expect(events[2]!.last_assistant_message).toBe('The widget build is green: npm test passes.');
    expect(events[3]!.reason).toBe('deleted');
  });
});

describe('the OpenCode plugin cairn writes, loaded as OpenCode loads it', () => {
  const saved = { ...process.env };
  afterAll(() => {
    process.env = saved;
  });

  it('records a whole session through the real client without waiting for it, and puts cairn’s context into the system prompt', async () => {
    OC = withSession('ses_plugin');
    const { env, home } = machine(server.url);
    // The plugin's children inherit OpenCode's environment: here, this test's.
    process.env = { ...saved, ...env };
    delete process.env.XDG_CONFIG_HOME;
    expect(await run(['install', '--agent', 'opencode', '--client', CLIENT], memIo({ env }))).toBe(0);
    const file = join(home, '.config', 'opencode', 'plugins', 'cairn.js');
    const mod = (await import(pathToFileURL(file).href)) as Record<
      string,
      (input: unknown) => Promise<Record<string, Hook>>
    >;
    expect(Object.keys(mod)).toEqual(['CairnMemory']);
    server.context.index = '<cairn-context>widgets: the build broke on a stale snapshot</cairn-context>';
    const hooks = await mod.CairnMemory!({ directory: DIR, worktree: DIR });
    const session = call('chatMessage').input.sessionID as string;

    await hooks.event!({ event: OC.sessionCreated });
    await hooks['chat.message']!(call('chatMessage').input, call('chatMessage').output);
    await until(() => storedFor(session).some((e) => e.kind === 'init'), 'the prompt stored');
    const prompt = { system: [] as string[] };
    await until(() => {
      prompt.system = [];
      void hooks['experimental.chat.system.transform']!({ sessionID: session, model: {} }, prompt);
      return prompt.system.length > 0;
    }, 'the session context injected');
    expect(prompt.system).toEqual(['<cairn-context>widgets: the build broke on a stale snapshot</cairn-context>']);
    await hooks['tool.execute.after']!(call('toolBash').input, call('toolBash').output);
    for (const event of [OC.assistantUpdated, OC.assistantText, OC.sessionIdle]) await hooks.event!({ event });
    await until(
      () =>
        storedFor(session).some((e) => e.kind === 'summarize') &&
        storedFor(session).some((e) => e.kind === 'observation'),
      'the tool call and the answer stored',
    );
    await hooks.event!({ event: OC.sessionDeleted });
    await until(() => storedFor(session).some((e) => e.kind === 'end'), 'the end stored');

    const byKind: Record<string, Record<string, unknown>> = Object.fromEntries(
      storedFor(session).map((e) => [String(e.kind), e]),
    );
    expect(Object.keys(byKind).sort()).toEqual(['end', 'init', 'observation', 'summarize']);
    expect(Object.values(byKind).every((e) => e.platform === 'opencode')).toBe(true);
    expect(byKind.init!.prompt).toBe('Make the widget build green again');
    expect(byKind.observation).toMatchObject({
      tool_name: 'Bash',
      tool_input: { command: 'npm test' },
      tool_response: 'PASS src/widget.test.ts (12 tests)',
    });
    expect(byKind.summarize!.last_assistant_message).toBe('The widget build is green: npm test passes.');
    expect(byKind.end!.reason).toBe('deleted');

    // OpenCode shutting the plugin down ends the sessions it still has open.
    const other = withSession('ses_plugin_exit');
    const chat = other.chatMessage as { input: Record<string, unknown>; output: Record<string, unknown> };
    await hooks['chat.message']!(chat.input, chat.output);
    await until(() => storedFor('ses_plugin_exit').some((e) => e.kind === 'init'), 'the second prompt stored');
    await hooks.dispose!();
    const end = await until(
      () => storedFor('ses_plugin_exit').find((e) => e.kind === 'end'),
      'the second session ended',
    );
    expect(end).toMatchObject({ platform: 'opencode', reason: 'exit' });
  });
});
