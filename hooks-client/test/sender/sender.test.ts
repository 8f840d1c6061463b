// The quick path as installed: post-tool-use only writes the inbox and makes sure one background sender runs;
// the sender redacts and delivers live; synchronous hooks send what is left themselves; a private prompt's
// tool calls never leave the machine. Built client, one process per hook, against a fake server.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClient } from '../../build.mjs';
import { fakeServer, hookJson, machine, type FakeServer } from '../support';

const CLIENT = fileURLToPath(new URL('../../dist/cairn.cjs', import.meta.url));

let server: FakeServer;
beforeAll(async () => {
  await buildClient({ quiet: true });
  server = await fakeServer();
}, 60_000);
afterAll(() => server.close());

function cairn(
  env: Record<string, string | undefined>,
  args: string[],
  stdin = '',
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLIENT, ...args],
      { env: env as NodeJS.ProcessEnv, timeout: 20_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(stdin);
  });
}

const stateDir = (home: string) => join(home, '.local', 'state', 'cairn');
const inbox = (home: string) =>
  existsSync(join(stateDir(home), 'inbox'))
    ? readdirSync(join(stateDir(home), 'inbox')).filter((n) => !n.startsWith('.'))
    : [];
const stored = (session: string) => [...server.stored.values()].filter((e) => e.session_id === session);

async function until<T>(what: string, probe: () => T | null | undefined | false, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const tool = (session: string, id: string, fields: Record<string, unknown> = {}) =>
  hookJson({
    session_id: session,
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_input: { command: `echo ${id}` },
    tool_response: { stdout: id },
    tool_use_id: id,
    ...fields,
  });

describe('post-tool-use through the inbox and the background sender', () => {
  it('reaches the server with no other hook running, redacted and tag-stripped, and the sender leaves when idle', async () => {
    const { home, env } = machine(server.url);
    env.CAIRN_SENDER_IDLE_MS = '1500';
    const secret = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
    const r = await cairn(
      env,
      ['hook', 'post-tool-use'],
      tool('s-live', 'live-1', {
        tool_input: { command: `git push https://${secret}@github.com/acme/x` },
        tool_response: 'pushed <private>the vault code</private> ok',
      }),
    );
    expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
    const [event] = await until('the sender to deliver', () => (stored('s-live').length ? stored('s-live') : null));
    expect(JSON.stringify(event)).not.toContain(secret);
    expect(JSON.stringify(event)).not.toContain('the vault code');
    expect(event!.tool_use_id).toBe('live-1');
    expect(typeof event!.client_seq).toBe('number');
    expect(inbox(home)).toEqual([]);
    // Idle, it removes its lock and exits (the log says so).
    await until(
      'the sender to leave',
      () =>
        !existsSync(join(stateDir(home), 'sender.lock')) &&
        /left/.test(readFileSync(join(stateDir(home), 'sender.log'), 'utf8')),
    );
  }, 30_000);

  it('starts one sender for many concurrent hooks, and every event arrives once, in client_seq order of the hooks', async () => {
    const { home, env } = machine(server.url);
    // Long enough that however slow the rounds run the first sender is still there; --stop ends it below.
    env.CAIRN_SENDER_IDLE_MS = '60000';
    for (let round = 0; round < 3; round++) {
      await Promise.all(
        Array.from({ length: 8 }, (_, i) => cairn(env, ['hook', 'post-tool-use'], tool('s-many', `m-${round}-${i}`))),
      );
    }
    const events = await until('24 events', () => (stored('s-many').length === 24 ? stored('s-many') : null));
    expect(new Set(events.map((e) => e.tool_use_id)).size).toBe(24);
    expect(new Set(events.map((e) => e.client_seq)).size).toBe(24);
    // Rounds ran one after another: every event of a later round has a later client_seq.
    const seqOf = (round: number) =>
      events.filter((e) => String(e.tool_use_id).startsWith(`m-${round}-`)).map((e) => e.client_seq as number);
    expect(Math.max(...seqOf(0))).toBeLessThan(Math.min(...seqOf(1)));
    expect(Math.max(...seqOf(1))).toBeLessThan(Math.min(...seqOf(2)));
    const log = readFileSync(join(stateDir(home), 'sender.log'), 'utf8');
    expect(log.match(/started/g)).toHaveLength(1);
    const status = await cairn(env, ['status']);
    expect(status.stdout).toMatch(/sender: +running \(pid \d+/);
    expect((await cairn(env, ['sender', '--stop'])).stdout).toMatch(/asked the sender \(pid \d+\) to stop/);
    await until('the sender to stop', () => !existsSync(join(stateDir(home), 'sender.lock')));
    expect(readFileSync(join(stateDir(home), 'sender.log'), 'utf8')).toMatch(/stopped \(SIGTERM\)/);
  }, 60_000);

  it('lets Stop send the tool calls itself, before it returns, when no sender runs', async () => {
    const { home, env } = machine(server.url);
    // A live-looking lock of another process: the quick hook starts no sender, so only Stop can send.
    mkdirSync(stateDir(home), { recursive: true });
    writeFileSync(join(stateDir(home), 'sender.lock'), `${process.pid} ${Date.now()}`);
    await cairn(env, ['hook', 'post-tool-use'], tool('s-sync', 'sync-1'));
    await cairn(
      env,
      ['hook', 'post-tool-use-failure'],
      hookJson({
        session_id: 's-sync',
        hook_event_name: 'PostToolUseFailure',
        tool_name: 'Bash',
        tool_input: { command: 'false' },
        error: 'exit 1',
        tool_use_id: 'sync-2',
      }),
    );
    expect(inbox(home)).toHaveLength(2);
    expect(stored('s-sync')).toEqual([]);
    await cairn(
      env,
      ['hook', 'stop'],
      hookJson({
        session_id: 's-sync',
        hook_event_name: 'Stop',
        stop_hook_active: false,
        last_assistant_message: 'Both ran.',
      }),
    );
    const kinds = stored('s-sync').map((e) => `${e.kind}:${e.tool_use_id ?? ''}`);
    expect(kinds).toEqual(['observation:sync-1', 'observation:sync-2', 'summarize:']);
    expect(inbox(home)).toEqual([]);
  }, 30_000);
});

describe('a wholly <private> prompt', () => {
  for (const withIds of [true, false]) {
    it(`never sends its tool calls or its summary (${withIds ? 'matched by prompt_id' : 'matched by time, no prompt_id'}), and records the next prompt's`, async () => {
      const { env } = machine(server.url);
      env.CAIRN_SENDER_IDLE_MS = '1000';
      const s = `s-private-${withIds}`;
      const id = (p: string) => (withIds ? { prompt_id: p } : {});
      await cairn(
        env,
        ['hook', 'user-prompt-submit'],
        hookJson({
          session_id: s,
          hook_event_name: 'UserPromptSubmit',
          prompt: '<private>deploy with key zebra-91</private>',
          ...id('p1'),
        }),
      );
      await cairn(
        env,
        ['hook', 'post-tool-use'],
        tool(s, 'secret-call', { tool_input: { command: 'echo zebra-91' }, ...id('p1') }),
      );
      await cairn(
        env,
        ['hook', 'stop'],
        hookJson({
          session_id: s,
          hook_event_name: 'Stop',
          stop_hook_active: false,
          last_assistant_message: 'Deployed with zebra-91.',
          ...id('p1'),
        }),
      );
      await new Promise((r) => setTimeout(r, 5));
      await cairn(
        env,
        ['hook', 'user-prompt-submit'],
        hookJson({ session_id: s, hook_event_name: 'UserPromptSubmit', prompt: 'list the files please', ...id('p2') }),
      );
      await cairn(env, ['hook', 'post-tool-use'], tool(s, 'open-call', id('p2')));
      expect((await cairn(env, ['flush', '--timeout', '10'])).code).toBe(0);
      await until('the second prompt’s call', () => stored(s).some((e) => e.tool_use_id === 'open-call'));
      const all = JSON.stringify(
        server.requests.filter((r) => JSON.stringify(r.json ?? {}).includes(s)).map((r) => r.json),
      );
      expect(all).not.toContain('zebra-91');
      expect(all).not.toContain('secret-call');
      expect(stored(s).map((e) => `${e.kind}:${e.private ?? e.tool_use_id ?? ''}`)).toEqual([
        'init:true',
        'init:false',
        'observation:open-call',
      ]);
    }, 30_000);
  }
});
