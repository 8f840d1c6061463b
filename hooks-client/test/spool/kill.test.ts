// Claude Code may end a hook process at any moment (in `claude -p` it ends async hooks when it exits). The
// built client is killed with SIGKILL at each step of its work; the next hook and `cairn flush` must then
// bring every event that was written to the spool to the server exactly once, in order.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildClient } from '../../build.mjs';
import { fakeServer, hookJson, machine } from '../support';

const CLIENT = fileURLToPath(new URL('../../dist/cairn.cjs', import.meta.url));
/** `cairn flush`'s bound on a stall (it returns as soon as the spool is empty), not a speed claim. */
const FLUSH_S = '40';

beforeAll(async () => {
  await buildClient({ quiet: true });
}, 60_000);

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
}

function cairn(env: Record<string, string | undefined>, args: string[], stdin = ''): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLIENT, ...args], { env, stdio: ['pipe', 'ignore', 'ignore'] });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal }));
    child.stdin.end(stdin);
  });
}

const toolCall = (id: string) =>
  hookJson({
    hook_event_name: 'PostToolUse',
    prompt_id: 'prompt-1',
    tool_name: 'Bash',
    tool_input: { command: `echo ${id}` },
    tool_response: { stdout: id, stderr: '' },
    tool_use_id: id,
  });

const spoolText = (home: string) => {
  const f = join(home, '.local', 'state', 'cairn', 'spool.jsonl');
  return existsSync(f) ? readFileSync(f, 'utf8') : '';
};

// Points after the event is in the spool: from here on it must arrive, whatever happens.
const AFTER_SPOOLED = [
  'appended',
  'lock-created:2',
  'replay-locked',
  'request-written',
  'sent',
  'advance-meta-written',
  'advanced',
];
// Points before the line is written: the event was never promised, but what the dead process left behind
// (a lock file without an owner, a sequence number taken) must not hold up the events after it.
const BEFORE_SPOOLED = ['lock-created:1', 'append-meta-written'];
// Points on the way to the server. A hook reaches them only within its time budget, counted from its process's
// start (1 s for post-tool-use), which a loaded machine may spend starting node: the hook then leaves its event
// in the spool and exits without reaching the point. So the process killed there replays a spooled event with
// `cairn flush`: the same replay code (spool/deliver.ts), without a hook's budget.
const ON_THE_WIRE = ['request-written', 'sent', 'advance-meta-written', 'advanced'];

/** A server that is down: every request answered 503. */
const down: NonNullable<Awaited<ReturnType<typeof fakeServer>>['handler']> = (_req, res) => {
  res.writeHead(503, { 'content-type': 'application/json' });
  res.end('{"error":{"code":"unavailable","message":"down"}}');
  return true;
};

const spooledIds = (home: string) =>
  spoolText(home)
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => (JSON.parse(l) as { body: { tool_use_id: string } }).body.tool_use_id);

// CAIRN_SENDER=off: the hook spools and sends its event itself (no background sender), which is the path
// these kill points are on; the quick path's own points are below.
const inHook = (url: string) => {
  const m = machine(url);
  m.env.CAIRN_SENDER = 'off';
  return m;
};

describe('a hook that sends its own event (CAIRN_SENDER=off), killed at any step of its work', () => {
  for (const point of [...AFTER_SPOOLED, ...BEFORE_SPOOLED]) {
    const promised = AFTER_SPOOLED.includes(point);
    it(`${promised ? 'still delivers' : 'does not block the events after'} an event killed at "${point}", each exactly once, in order`, async () => {
      const server = await fakeServer();
      try {
        const { home, env } = inHook(server.url);
        let killed: Ran;
        if (ON_THE_WIRE.includes(point)) {
          // The hook spools its event while the server is down; the server is back for the replay killed at the point.
          server.handler = down;
          expect(await cairn(env, ['hook', 'post-tool-use'], toolCall('killed'))).toEqual({ code: 0, signal: null });
          server.handler = undefined;
          expect(spooledIds(home)).toEqual(['killed']);
          killed = await cairn({ ...env, CAIRN_TEST_KILL_AT: point }, ['flush', '--timeout', FLUSH_S]);
        } else {
          killed = await cairn({ ...env, CAIRN_TEST_KILL_AT: point }, ['hook', 'post-tool-use'], toolCall('killed'));
        }
        expect(killed.signal).toBe('SIGKILL');

        const next = await cairn(env, ['hook', 'post-tool-use'], toolCall('next'));
        expect(next).toEqual({ code: 0, signal: null });
        const flush = await cairn(env, ['flush', '--timeout', FLUSH_S]);
        expect(flush).toEqual({ code: 0, signal: null });

        const ids = [...server.stored.values()].map((e) => e.tool_use_id);
        expect(ids).toEqual(promised ? ['killed', 'next'] : ['next']);
        const seqs = [...server.stored.values()].map((e) => e.client_seq as number);
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
        expect(new Set(seqs).size).toBe(seqs.length);
        expect([...server.stored.values()].every((e) => e.prompt_id === 'prompt-1')).toBe(true);
        expect(spoolText(home)).toBe('');
      } finally {
        await server.close();
      }
    });
  }

  it('keeps the event in the spool when killed after writing it and the server never answers, until it is back', async () => {
    const server = await fakeServer();
    const { home, env } = inHook(server.url);
    server.handler = down;
    try {
      // Spooled by its hook; the replay that wrote its request is killed before any answer (see ON_THE_WIRE).
      expect(await cairn(env, ['hook', 'post-tool-use'], toolCall('first'))).toEqual({ code: 0, signal: null });
      expect(
        (await cairn({ ...env, CAIRN_TEST_KILL_AT: 'request-written' }, ['flush', '--timeout', FLUSH_S])).signal,
      ).toBe('SIGKILL');
      expect(await cairn(env, ['hook', 'post-tool-use'], toolCall('second'))).toEqual({ code: 0, signal: null });
      expect(server.stored.size).toBe(0);
      expect(spooledIds(home)).toEqual(['first', 'second']);
      server.handler = undefined;
      expect(
        await cairn(env, ['hook', 'session-end'], hookJson({ hook_event_name: 'SessionEnd', reason: 'other' })),
      ).toEqual({ code: 0, signal: null });
      // The hook sends what its budget (900 ms from its process's start) allows; on a loaded machine that may be
      // nothing, and what it leaves goes with the next hook or flush, which this one stands for.
      expect(await cairn(env, ['flush', '--timeout', FLUSH_S])).toEqual({ code: 0, signal: null });
      expect([...server.stored.values()].map((e) => e.kind)).toEqual(['observation', 'observation', 'end']);
      expect(spoolText(home)).toBe('');
    } finally {
      await server.close();
    }
  });
});

const inboxNames = (home: string) => {
  const dir = join(home, '.local', 'state', 'cairn', 'inbox');
  return existsSync(dir) ? readdirSync(dir) : [];
};

// The quick path (post-tool-use as installed): the hook only writes an inbox entry; a synchronous hook or
// `cairn flush` drains it. CAIRN_SENDER_IDLE_MS keeps any background sender the hooks start short-lived.
describe('a quick hook, or a drain of the inbox, killed at any step', () => {
  for (const [point, promised] of [
    ['entry-written', false],
    ['entry-renamed', true],
  ] as const) {
    it(`${promised ? 'still delivers' : 'leaves nothing behind that blocks'} an event killed at "${point}", exactly once`, async () => {
      const server = await fakeServer();
      try {
        const { home, env } = machine(server.url);
        env.CAIRN_SENDER_IDLE_MS = '200';
        const killed = await cairn(
          { ...env, CAIRN_TEST_KILL_AT: point },
          ['hook', 'post-tool-use'],
          toolCall('killed'),
        );
        expect(killed.signal).toBe('SIGKILL');
        expect(await cairn(env, ['hook', 'post-tool-use'], toolCall('next'))).toEqual({ code: 0, signal: null });
        expect(await cairn(env, ['flush', '--timeout', FLUSH_S])).toEqual({ code: 0, signal: null });
        const ids = [...server.stored.values()].map((e) => e.tool_use_id).sort();
        expect(ids).toEqual(promised ? ['killed', 'next'] : ['next']);
        expect(inboxNames(home).filter((n) => !n.startsWith('.'))).toEqual([]);
        expect(spoolText(home)).toBe('');
      } finally {
        await server.close();
      }
    });
  }

  it('delivers exactly once an entry whose drain was killed after it was spooled', async () => {
    const server = await fakeServer();
    try {
      const { home, env } = machine(server.url);
      // No background sender: the entry waits in the inbox for the next hook.
      const quiet = { ...env, CAIRN_SENDER_IDLE_MS: '200' };
      expect(
        await cairn({ ...quiet, CAIRN_TEST_KILL_AT: 'entry-renamed' }, ['hook', 'post-tool-use'], toolCall('drained')),
      ).toMatchObject({ signal: 'SIGKILL' });
      // The drainer killed after spooling the entry: `cairn flush`, whose drain has no hook's time budget (a stop
      // hook drains only in the first 500 ms of its process, which a loaded machine may spend starting node).
      expect(
        (await cairn({ ...quiet, CAIRN_TEST_KILL_AT: 'drain-spooled' }, ['flush', '--timeout', FLUSH_S])).signal,
      ).toBe('SIGKILL');
      expect(await cairn(quiet, ['flush', '--timeout', FLUSH_S])).toEqual({ code: 0, signal: null });
      const drained = [...server.stored.values()].filter((e) => e.tool_use_id === 'drained');
      expect(drained).toHaveLength(1);
      expect(inboxNames(home).filter((n) => !n.startsWith('.'))).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
