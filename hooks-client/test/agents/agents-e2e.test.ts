// Codex, Gemini CLI, Cursor and OpenCode payloads (the documented shapes in fixtures/agents) through the real client into a real
// `wrangler dev`: stored with the agent as platform, found by search with platform=, and reachable through the
// `cairn mcp-stdio` bridge the agents are configured with (a real MCP server behind it).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { mintDevToken } from '../../../scripts/dev-server.mjs';
import { freshTeam, SHARED_SERVER_HOOK_MS, sharedServer } from '../../../test/support/shared-server';
import { buildClient } from '../../build.mjs';
import { run } from '../../src/run';
import { agentFixture, machine, memIo, tempDir } from '../support';

const CLIENT = fileURLToPath(new URL('../../dist/cairn.cjs', import.meta.url));

let dev: { url: string };
let token: string;
const run36 = Date.now().toString(36);

beforeAll(async () => {
  await buildClient({ quiet: true });
  const shared = await sharedServer();
  dev = shared;
  token = await mintDevToken(shared.url, shared.adminSecret, {
    team: freshTeam('agents-e2e'),
    user: 'ada',
    device: 'laptop',
  });
}, SHARED_SERVER_HOOK_MS);

async function hook(
  env: Record<string, string | undefined>,
  event: string,
  agent: string,
  payload: Record<string, unknown>,
) {
  expect(await run(['hook', event, '--agent', agent], memIo({ env, stdin: JSON.stringify(payload) }))).toBe(0);
}

async function searchIds(query: Record<string, string>): Promise<number[]> {
  const res = await fetch(`${dev.url}/api/search?${new URLSearchParams(query)}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { results: { id: number }[] }).results.map((r) => r.id);
}

async function eventually<T>(probe: () => Promise<T | null>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** JSON-RPC lines through `cairn mcp-stdio`; resolves with the answers once every request has one. */
function bridge(
  env: Record<string, string | undefined>,
  messages: Array<Record<string, unknown>>,
): Promise<Array<{ id: number; result?: { content?: { text: string }[] } }>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLIENT, 'mcp-stdio'], {
      env: env as NodeJS.ProcessEnv,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const wanted = messages.filter((m) => m.id !== undefined).length;
    const answers: Array<{ id: number }> = [];
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        answers.push(JSON.parse(buf.slice(0, nl)) as { id: number });
        buf = buf.slice(nl + 1);
        if (answers.length === wanted) child.stdin.end();
      }
    });
    child.on('error', reject);
    child.on('exit', () => resolve(answers as never));
    for (const m of messages) child.stdin.write(`${JSON.stringify(m)}\n`);
  });
}

describe('other agents against wrangler dev', () => {
  it('stores Codex and Gemini sessions under their own platform, and platform= separates them in search and over the MCP bridge', async () => {
    const { env } = machine(dev.url, token);
    const codex = agentFixture('codex');
    const gemini = agentFixture('gemini');
    const cs = `codex-${run36}`;
    const gs = `gemini-${run36}`;
    const cwd = tempDir('cairn-agents-repo-');
    const codexEvent = (name: string) => ({ ...codex[name], session_id: cs, cwd });
    const geminiEvent = (name: string) => ({ ...gemini[name], session_id: gs, cwd });

    await hook(env, 'session-start', 'codex', codexEvent('SessionStart'));
    await hook(env, 'user-prompt-submit', 'codex', codexEvent('UserPromptSubmit'));
    await hook(env, 'post-tool-use', 'codex', {
      ...codexEvent('PostToolUse'),
      tool_input: { command: 'npm run lint-codexwidget' },
      tool_response: 'lint-codexwidget: 3 problems',
    });
    await hook(env, 'stop', 'codex', codexEvent('Stop'));
    await hook(env, 'session-start', 'gemini', geminiEvent('SessionStart'));
    await hook(env, 'user-prompt-submit', 'gemini', geminiEvent('BeforeAgent'));
    await hook(env, 'post-tool-use', 'gemini', {
      ...geminiEvent('AfterTool'),
      tool_input: { command: 'npm run lint-geminiwidget' },
      tool_response: { llmContent: 'lint-geminiwidget: clean', returnDisplay: 'clean' },
    });
    await hook(env, 'stop', 'gemini', geminiEvent('AfterAgent'));
    await hook(env, 'session-end', 'gemini', geminiEvent('SessionEnd'));

    const codexIds = await eventually(async () => {
      const ids = await searchIds({ q: 'codexwidget', platform: 'codex', mode: 'fts' });
      return ids.length ? ids : null;
    });
    const geminiIds = await eventually(async () => {
      const ids = await searchIds({ q: 'geminiwidget', platform: 'gemini', mode: 'fts' });
      return ids.length ? ids : null;
    });
    expect(await searchIds({ q: 'codexwidget', platform: 'gemini', mode: 'fts' })).toEqual([]);
    expect(await searchIds({ q: 'geminiwidget', platform: 'codex', mode: 'fts' })).toEqual([]);
    expect(await searchIds({ q: 'codexwidget', platform: 'claude-code', mode: 'fts' })).toEqual([]);

    const cli = memIo({ env });
    expect(await run(['search', 'codexwidget', '--all', '--platform', 'codex', '--json'], cli)).toBe(0);
    expect((JSON.parse(cli.stdout) as { results: { id: number }[] }).results.map((r) => r.id)).toEqual(codexIds);
    const none = memIo({ env });
    await run(['search', 'codexwidget', '--all', '--platform', 'gemini', '--json'], none);
    expect((JSON.parse(none.stdout) as { results: unknown[] }).results).toEqual([]);

    const answers = await bridge(env, [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'codex-e2e', version: '0' } },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'search', arguments: { query: 'codexwidget', platform: 'codex' } },
      },
    ]);
    const text =
      answers
        .find((a) => a.id === 2)
        ?.result?.content?.map((c) => c.text)
        .join('\n') ?? '';
    expect(text).toContain(`#${codexIds[0]}`);
    expect(text).not.toContain(`#${geminiIds[0]}`);
  }, 120_000);

  it('stores Cursor and OpenCode sessions under their own platform, found by platform= and by no other', async () => {
    const { env } = machine(dev.url, token);
    const cursor = agentFixture('cursor');
    const oc = agentFixture('opencode');
    const cs = `cursor-${run36}`;
    const os = `opencode-${run36}`;
    const cwd = tempDir('cairn-agents-repo-');
    const cursorEvent = (name: string) => ({
      ...cursor[name],
      conversation_id: cs,
      session_id: cs,
      workspace_roots: [cwd],
    });
    const shell = cursorEvent('postToolUseShell');
    await hook(env, 'session-start', 'cursor', cursorEvent('sessionStart'));
    await hook(env, 'user-prompt-submit', 'cursor', cursorEvent('beforeSubmitPrompt'));
    await hook(env, 'post-tool-use', 'cursor', {
      ...shell,
      cwd,
      tool_input: { command: 'npm run lint-cursorwidget', cwd },
      tool_output: JSON.stringify({ output: 'lint-cursorwidget: 2 problems', exitCode: 0 }),
    });
    await hook(env, 'stop', 'cursor', cursorEvent('afterAgentResponse'));
    await hook(env, 'session-end', 'cursor', cursorEvent('sessionEnd'));
    const chat = oc.chatMessage as { input: Record<string, unknown>; output: Record<string, unknown> };
    const bash = oc.toolBash as { input: Record<string, unknown>; output: Record<string, unknown> };
    await hook(env, 'session-start', 'opencode', { directory: cwd, sessionID: os });
    await hook(env, 'user-prompt-submit', 'opencode', {
      directory: cwd,
      input: { ...chat.input, sessionID: os },
      output: chat.output,
    });
    await hook(env, 'post-tool-use', 'opencode', {
      directory: cwd,
      input: { ...bash.input, sessionID: os, args: { command: 'npm run lint-opencodewidget' } },
      output: { ...bash.output, output: 'lint-opencodewidget: clean' },
    });
    await hook(env, 'stop', 'opencode', {
      directory: cwd,
      sessionID: os,
      text: 'The widget build is green: npm test passes.',
    });
    await hook(env, 'session-end', 'opencode', { directory: cwd, sessionID: os, reason: 'exit' });

    const cursorIds = await eventually(async () => {
      const ids = await searchIds({ q: 'cursorwidget', platform: 'cursor', mode: 'fts' });
      return ids.length ? ids : null;
    });
    const opencodeIds = await eventually(async () => {
      const ids = await searchIds({ q: 'opencodewidget', platform: 'opencode', mode: 'fts' });
      return ids.length ? ids : null;
    });
    expect(cursorIds.length).toBeGreaterThan(0);
    expect(opencodeIds.length).toBeGreaterThan(0);
    expect(await searchIds({ q: 'cursorwidget', platform: 'opencode', mode: 'fts' })).toEqual([]);
    expect(await searchIds({ q: 'opencodewidget', platform: 'cursor', mode: 'fts' })).toEqual([]);
    expect(await searchIds({ q: 'cursorwidget opencodewidget', platform: 'claude-code', mode: 'fts' })).toEqual([]);
  }, 120_000);
});
