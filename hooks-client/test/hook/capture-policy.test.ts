// The capture policy on this machine (issue 38): the mode a session start hears (x-cairn-capture) is kept for the
// checkout and obeyed by every hook; `ask` blocks the session's first prompt with how to answer, `/cairn:capture on`
// lets events flow; the status line says so. Against a fake API on 127.0.0.1, every hook through run(argv, io).
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../src/run';
import { fakeServer, hookJson, machine, memIo, tempDir, type FakeServer } from '../support';

let server: FakeServer;
/** What the fake's GET /api/context sends as x-cairn-capture (null: no header, as a server before issue 38). */
let mode: string | null = null;
beforeAll(async () => {
  server = await fakeServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  server.context = { index: '<cairn-context>\n#12 10:02 fixed the login race\n</cairn-context>', file: '', prompt: '' };
  mode = null;
  server.handler = (req, res) => {
    if (req.path.startsWith('/api/observer/state')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ state: 'ok', code: null, notice: null }));
      return true;
    }
    if (req.method === 'POST' && req.path === '/api/context') {
      // The index with a checkout report (a git checkout, evidence on): the same header on the JSON answer.
      res.writeHead(200, { 'content-type': 'application/json', ...(mode ? { 'x-cairn-capture': mode } : {}) });
      const watch = { files: [], branches: [] };
      const checkout = { digest: null, need: false, unreported: 0 };
      res.end(JSON.stringify({ text: server.context.index, checkout, watch, watch_digest: '' }));
      return true;
    }
    if (!req.path.startsWith('/api/context?')) return false;
    res.writeHead(200, { 'content-type': 'text/plain', ...(mode ? { 'x-cairn-capture': mode } : {}) });
    res.end(server.context.index);
    return true;
  };
});

/** One machine (its own state dir, no background sender) and one checkout. */
function checkout() {
  const { env } = machine(server.url);
  env.CAIRN_SENDER = 'off';
  return { env, cwd: tempDir() };
}

async function hook(
  m: { env: Record<string, string | undefined>; cwd: string },
  event: string,
  fields: Record<string, unknown> = {},
) {
  const io = memIo({ env: m.env, cwd: m.cwd, stdin: hookJson({ cwd: m.cwd, ...fields }) });
  expect(await run(['hook', event], io)).toBe(0);
  return io.stdout ? (JSON.parse(io.stdout) as Record<string, unknown>) : null;
}

async function cairn(m: { env: Record<string, string | undefined>; cwd: string }, ...argv: string[]) {
  const io = memIo({ env: m.env, cwd: m.cwd });
  const code = await run(argv, io);
  return { code, out: io.stdout, err: io.stderr };
}

/** Ingest requests (POST /api/context is the index, asked with a checkout report). */
const sent = () => server.requests.filter((r) => r.method === 'POST' && r.path !== '/api/context').map((r) => r.path);

/** A session's recording hooks after its start: a prompt, a tool call, the turn's end, the session's end. */
async function work(m: { env: Record<string, string | undefined>; cwd: string }, session: string) {
  const out = await hook(m, 'user-prompt-submit', { session_id: session, prompt: 'rename the widgets table' });
  await hook(m, 'post-tool-use', {
    session_id: session,
    tool_name: 'Bash',
    tool_input: { command: 'ls' },
    tool_response: 'a b',
    tool_use_id: `${session}-t1`,
  });
  await hook(m, 'stop', { session_id: session, last_assistant_message: 'Renamed it.' });
  await hook(m, 'session-end', { session_id: session, reason: 'other' });
  return out;
}

async function statusline(m: { env: Record<string, string | undefined>; cwd: string }, session: string) {
  const io = memIo({ env: m.env, cwd: m.cwd, stdin: JSON.stringify({ session_id: session, cwd: m.cwd }) });
  expect(await run(['statusline'], io)).toBe(0);
  return io.stdout.trim();
}

describe('capture off', () => {
  it('sends no event of a session whose start heard off, keeps recall, and says so on the status line', async () => {
    const m = checkout();
    mode = 'off';
    const start = (await hook(m, 'session-start', { session_id: 's-off', source: 'startup' })) as {
      hookSpecificOutput: { additionalContext: string };
    };
    expect(start.hookSpecificOutput.additionalContext).toContain('fixed the login race');
    expect(await work(m, 's-off')).toBeNull();
    expect(sent()).toEqual([]);
    expect(await statusline(m, 's-off')).toMatch(/^cairn ⏸ .* · capture off$/);

    // The admins turn it on: the next session start hears it and the same checkout records again.
    mode = 'on';
    await hook(m, 'session-start', { session_id: 's-on', source: 'startup' });
    await work(m, 's-on');
    expect(sent().length).toBeGreaterThanOrEqual(4);
    expect(await statusline(m, 's-on')).not.toContain('capture');
  });

  it('hears it from the index with a checkout report too (a git checkout)', async () => {
    const m = checkout();
    execFileSync('git', ['init', '-q'], { cwd: m.cwd });
    mode = 'off';
    const start = (await hook(m, 'session-start', { session_id: 'g-1' })) as {
      hookSpecificOutput: { additionalContext: string };
    };
    expect(server.requests.some((r) => r.method === 'POST' && r.path === '/api/context')).toBe(true);
    expect(start.hookSpecificOutput.additionalContext).toContain('fixed the login race');
    await work(m, 'g-1');
    expect(sent()).toEqual([]);
  });

  it('keeps the last mode heard when the server cannot be reached, and takes a server without the header as on', async () => {
    const m = checkout();
    mode = 'off';
    await hook(m, 'session-start', { session_id: 's-1' });
    const offline = { ...m, env: { ...m.env, CAIRN_URL: 'http://127.0.0.1:9' } };
    await hook(offline, 'session-start', { session_id: 's-2' });
    await work(m, 's-2');
    expect(sent()).toEqual([]);
    mode = null;
    await hook(m, 'session-start', { session_id: 's-3' });
    await work(m, 's-3');
    expect(sent().length).toBeGreaterThanOrEqual(4);
  });
});

describe('capture ask', () => {
  it('blocks the first prompt with how to answer, sends nothing until answered, and /cairn:capture on lets events flow', async () => {
    const m = checkout();
    mode = 'ask';
    await hook(m, 'session-start', { session_id: 's-ask', source: 'startup' });
    expect(await statusline(m, 's-ask')).toContain('capture asks: /cairn:capture on|off');

    // Claude Code's documented block for UserPromptSubmit: the prompt is not run, the reason is shown.
    const blocked = await work(m, 's-ask');
    expect(blocked).toEqual({ decision: 'block', reason: expect.stringContaining('/cairn:capture on') });
    expect(String(blocked?.reason)).toContain('/cairn:capture off');
    expect(sent()).toEqual([]);
    // Asked once a session: the next prompt goes through, still unrecorded.
    expect(await hook(m, 'user-prompt-submit', { session_id: 's-ask', prompt: 'and the next one' })).toBeNull();
    // The answering prompt itself is never blocked, even as a session's first.
    expect(await hook(m, 'user-prompt-submit', { session_id: 's-ask-2', prompt: '/cairn:capture on' })).toBeNull();
    expect(sent()).toEqual([]);

    // The answer (what /cairn:capture on runs) is kept for the checkout: events flow, in later sessions too.
    const answer = await cairn(m, 'capture', 'on');
    expect(answer.code).toBe(0);
    expect(answer.out).toContain('are recorded');
    await work(m, 's-ask');
    expect(sent()).toContain('/api/sessions/init');
    expect(sent()).toContain('/api/sessions/observations');
    expect(await statusline(m, 's-ask')).not.toContain('capture');
    server.requests.length = 0;
    await hook(m, 'session-start', { session_id: 's-later' });
    expect(await work(m, 's-later')).toBeNull();
    expect(sent()).toContain('/api/sessions/init');
  });

  it('remembers /cairn:capture off for the checkout, and never lifts the admins’ off', async () => {
    const m = checkout();
    mode = 'ask';
    await hook(m, 'session-start', { session_id: 'a-1' });
    expect((await cairn(m, 'capture', 'off')).out).toContain('nothing of sessions');
    expect(await work(m, 'a-1')).toBeNull();
    expect(sent()).toEqual([]);
    expect(await statusline(m, 'a-1')).toContain('capture off');
    // Another checkout on the same machine is asked on its own.
    const other = { ...m, cwd: tempDir() };
    await hook(other, 'session-start', { session_id: 'b-1' });
    expect((await work(other, 'b-1'))?.decision).toBe('block');

    mode = 'off';
    await hook(m, 'session-start', { session_id: 'a-2' });
    expect((await cairn(m, 'capture', 'on')).out).toContain('admins set capture off');
    await work(m, 'a-2');
    expect(sent()).toEqual([]);
    expect((await cairn(m, 'capture', 'maybe')).code).toBe(2);
  });
});
