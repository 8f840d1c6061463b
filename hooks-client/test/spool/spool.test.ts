// Offline: events that cannot be delivered are spooled, replayed oldest first, bounded, and never corrupted
// by concurrent hook processes.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildClient } from '../../build.mjs';
import { Spool } from '../../src/spool/spool';
import { run } from '../../src/run';
import { deadPort, fakeServer, hookJson, machine, memIo, tempDir } from '../support';

const exec = promisify(execFile);
const CLIENT = fileURLToPath(new URL('../../dist/cairn.cjs', import.meta.url));

beforeAll(async () => {
  await buildClient({ quiet: true });
}, 60_000);

const spoolLines = (home: string) => {
  const f = join(home, '.local', 'state', 'cairn', 'spool.jsonl');
  return existsSync(f)
    ? readFileSync(f, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { kind: string; body: Record<string, unknown> })
    : [];
};

describe('offline and back', () => {
  it('spools while the server is down, then delivers every event exactly once, oldest first', async () => {
    const port = await deadPort();
    const { home, env } = machine(`http://127.0.0.1:${port}`);
    const sent: string[] = [];
    const steps: Array<[string, Record<string, unknown>]> = [
      ['user-prompt-submit', { prompt: 'first prompt', prompt_id: 'p1' }],
      ...Array.from({ length: 5 }, (_, i): [string, Record<string, unknown>] => [
        'post-tool-use',
        { tool_name: 'Bash', tool_input: { command: `step ${i}` }, tool_response: 'ok', tool_use_id: `tu-${i}` },
      ]),
      ['stop', { last_assistant_message: 'done with the first turn' }],
    ];
    for (const [event, fields] of steps) {
      // A closed port refuses at once: the hook spools and returns (its wall time is in bench/hooks-client.bench.mjs).
      const io = memIo({ env, stdin: hookJson(fields) });
      expect(await run(['hook', event], io)).toBe(0);
    }
    const spooled = spoolLines(home);
    expect(spooled.map((e) => e.kind)).toEqual([
      'init',
      'observation',
      'observation',
      'observation',
      'observation',
      'observation',
      'summarize',
    ]);
    sent.push(...spooled.map((e) => String(e.body.event_id)));

    // The server comes back on the same port; a replay is interrupted once, then `cairn flush` finishes.
    const server = await fakeServer(port);
    try {
      let calls = 0;
      server.handler = (req, res) => {
        if (req.path === '/api/events/batch' && ++calls === 1) {
          res.writeHead(503, { 'content-type': 'application/json' });
          res.end('{"error":{"code":"unavailable","message":"try later"}}');
          return true;
        }
      };
      const first = memIo({ env });
      expect(await run(['flush'], first)).toBe(1);
      expect(server.stored.size).toBe(0);
      const second = memIo({ env });
      expect(await run(['flush'], second)).toBe(0);
      expect(second.stdout).toContain('7 of 7 events delivered');
      // Replaying again (e.g. a crash before the cursor moved) is harmless: ids make repeats duplicates.
      expect([...server.stored.keys()]).toEqual(sent);
      expect(spoolLines(home)).toHaveLength(0);

      // A later hook with an empty spool goes straight to the single route.
      await run(['hook', 'session-end'], memIo({ env, stdin: hookJson({ reason: 'other' }) }));
      expect(server.requests.at(-1)!.path).toBe('/api/sessions/end');
      expect(server.stored.size).toBe(8);
    } finally {
      await server.close();
    }
  });

  it('queues a new event behind older spooled ones and replays them in order within the hook budget', async () => {
    const server = await fakeServer();
    try {
      const { home, env } = machine(server.url);
      const spool = new Spool(join(home, '.local', 'state', 'cairn'), { maxEvents: 100, maxBytes: 1e6 });
      spool.append({
        kind: 'init',
        body: { event_id: 'old-1', session_id: 's', project: 'p', cwd: '/', occurred_at: 1 },
      });
      await run(
        ['hook', 'post-tool-use'],
        memIo({ env, stdin: hookJson({ tool_name: 'Bash', tool_input: {}, tool_response: '', tool_use_id: 'new' }) }),
      );
      const batch = server.requests.find((r) => r.path === '/api/events/batch')!;
      const events = batch.json!.events as Array<{ kind: string; event_id: string }>;
      expect(events.map((e) => e.kind)).toEqual(['init', 'observation']);
      expect(events[0]!.event_id).toBe('old-1');
      expect(spoolLines(home)).toHaveLength(0);
    } finally {
      await server.close();
    }
  });

  it('falls back to the single routes when the server has no batch route', async () => {
    const server = await fakeServer();
    server.batchSupported = false;
    try {
      const { home, env } = machine(server.url);
      const spool = new Spool(join(home, '.local', 'state', 'cairn'), { maxEvents: 100, maxBytes: 1e6 });
      for (let i = 0; i < 3; i++)
        spool.append({
          kind: 'observation',
          body: { event_id: `e${i}`, session_id: 's', project: 'p', cwd: '/', occurred_at: i, tool_name: 'Bash' },
        });
      expect(await run(['flush'], memIo({ env }))).toBe(0);
      expect([...server.stored.keys()]).toEqual(['e0', 'e1', 'e2']);
      expect(server.requests.filter((r) => r.path === '/api/sessions/observations')).toHaveLength(3);
    } finally {
      await server.close();
    }
  });

  it('drops events refused for good into the dead-letter log instead of blocking the queue', async () => {
    const server = await fakeServer();
    server.handler = (req, res) => {
      if (req.path === '/api/events/batch') {
        const events = req.json!.events as Array<{ event_id: string }>;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            results: events.map((e) =>
              e.event_id === 'bad'
                ? { event_id: 'bad', error: { code: 'invalid_body', message: 'tool_name: required' } }
                : { event_id: e.event_id, accepted: true, duplicate: false },
            ),
          }),
        );
        return true;
      }
    };
    try {
      const { home, env } = machine(server.url);
      const dir = join(home, '.local', 'state', 'cairn');
      const spool = new Spool(dir, { maxEvents: 100, maxBytes: 1e6 });
      for (const id of ['a', 'bad', 'c'])
        spool.append({
          kind: 'observation',
          body: { event_id: id, session_id: 's', project: 'p', cwd: '/', occurred_at: 0 },
        });
      const io = memIo({ env });
      expect(await run(['flush'], io)).toBe(0);
      expect(io.stdout).toContain('1 refused');
      expect(readFileSync(join(dir, 'dead.jsonl'), 'utf8')).toContain('"event_id":"bad"');
    } finally {
      await server.close();
    }
  });
});

describe('bounds', () => {
  it('refuses events beyond its bound, counts them, and says so in status and once in the next session', async () => {
    const port = await deadPort();
    const { env } = machine(`http://127.0.0.1:${port}`);
    const bounded = { ...env, CAIRN_SPOOL_MAX_EVENTS: '5' };
    for (let i = 0; i < 7; i++) {
      await run(
        ['hook', 'post-tool-use'],
        memIo({
          env: bounded,
          stdin: hookJson({ tool_name: 'Bash', tool_input: { i }, tool_response: '', tool_use_id: `b${i}` }),
        }),
      );
    }
    const status = memIo({ env: bounded });
    await run(['status'], status);
    expect(status.stdout).toMatch(/spool: +5 events waiting/);
    expect(status.stdout).toContain('100% of the limit');
    expect(status.stdout).toContain('WARNING: 2 events were dropped');
    const server = await fakeServer(port);
    try {
      server.context.index = '<cairn-context>memory</cairn-context>';
      server.handler = (req, res) => {
        if (req.method === 'POST') {
          res.writeHead(503);
          res.end();
          return true;
        }
      };
      const first = memIo({ env: bounded, stdin: hookJson({ source: 'startup' }) });
      await run(['hook', 'session-start'], first);
      expect(first.stdout).toContain('2 events were dropped');
      const second = memIo({ env: bounded, stdin: hookJson({ source: 'startup' }) });
      await run(['hook', 'session-start'], second);
      expect(second.stdout).not.toContain('dropped');
      expect(second.stdout).toContain('memory');
    } finally {
      await server.close();
    }
  });
});

describe('concurrency', () => {
  it('loses nothing when 8 hook processes write the spool at once', async () => {
    const port = await deadPort();
    const { home, env } = machine(`http://127.0.0.1:${port}`);
    // Hooks that spool their own events (no background sender): this is about the spool's appends.
    env.CAIRN_SENDER = 'off';
    // Payloads far above PIPE_BUF, so a torn write would show as a broken line.
    const payload = 'z'.repeat(12_000);
    const runOne = (i: number) =>
      new Promise<void>((resolve, reject) => {
        const child = execFile(
          process.execPath,
          [CLIENT, 'hook', 'post-tool-use'],
          { env: env as NodeJS.ProcessEnv },
          (err) => (err ? reject(err) : resolve()),
        );
        child.stdin!.end(
          hookJson({
            tool_name: 'Bash',
            tool_input: { command: `proc ${i}` },
            tool_response: payload,
            tool_use_id: `c${i}`,
          }),
        );
      });
    for (let round = 0; round < 3; round++)
      await Promise.all(Array.from({ length: 8 }, (_, i) => runOne(round * 8 + i)));
    const lines = spoolLines(home);
    expect(lines).toHaveLength(24);
    expect(new Set(lines.map((l) => (l.body.tool_input as { command: string }).command)).size).toBe(24);
    const meta = JSON.parse(readFileSync(join(home, '.local', 'state', 'cairn', 'spool.meta.json'), 'utf8'));
    expect(meta.appended).toBe(24);
  });

  // The lock wait is long here so that the count is exact however loaded the machine is; with the default 2 s an
  // append that gives up still writes its line whole (O_APPEND), only uncounted.
  it('keeps every line whole and counts each once when 8 processes append 50 large events each', async () => {
    const dir = tempDir();
    // The spool module is bundled on the fly so the child processes run the real code.
    const { build } = await import('esbuild');
    const out = join(dir, 'append.mjs');
    await build({
      stdin: {
        contents: `import { Spool } from './spool.ts'; const s = new Spool(process.argv[2], { maxEvents: 1e6, maxBytes: 1e9, lockWaitMs: 120000 }); for (let i = 0; i < 50; i++) s.append({ kind: 'observation', body: { event_id: process.argv[3] + '-' + i, pad: 'p'.repeat(9000 + i) } });`,
        resolveDir: fileURLToPath(new URL('../../src/spool/', import.meta.url)),
        loader: 'ts',
      },
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: out,
      logLevel: 'error',
    });
    const spoolDir = join(dir, 'state');
    await Promise.all(Array.from({ length: 8 }, (_, p) => exec(process.execPath, [out, spoolDir, `p${p}`])));
    const text = readFileSync(join(spoolDir, 'spool.jsonl'), 'utf8');
    const ids = text
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { body: { event_id: string } }).body.event_id);
    expect(ids).toHaveLength(400);
    expect(new Set(ids).size).toBe(400);
    expect(JSON.parse(readFileSync(join(spoolDir, 'spool.meta.json'), 'utf8')).appended).toBe(400);
  });
});
