// The built client's start-up: post-tool-use leaves a V8 code cache that later runs use; a cache that does not
// fit (another build, a damaged file) is never trusted and is replaced.
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClient } from '../../build.mjs';
import { fakeServer, hookJson, machine, type FakeServer } from '../support';

const exec = promisify(execFile);
const CLIENT = fileURLToPath(new URL('../../dist/cairn.cjs', import.meta.url));

let server: FakeServer;
beforeAll(async () => {
  await buildClient({ quiet: true });
  server = await fakeServer();
}, 60_000);
afterAll(() => server.close());

function hook(env: Record<string, string | undefined>, event: string, fields: Record<string, unknown>) {
  const child = exec(process.execPath, [CLIENT, 'hook', event], { env, timeout: 10_000 });
  child.child.stdin!.end(hookJson(fields));
  return child;
}

const caches = (home: string) =>
  readdirSync(join(home, '.local', 'state', 'cairn')).filter((n) => n.endsWith('.v8cache'));

const stopFields = (n: number) => ({
  hook_event_name: 'Stop',
  stop_hook_active: false,
  last_assistant_message: `turn ${n} done`,
});

describe('boot', () => {
  it('answers post-tool-use without compiling the client, writes a code cache on the first full hook, then runs from it', async () => {
    const { home, env } = machine(server.url);
    // A live-looking sender lock: the quick hook starts no sender, so only this test's hooks compile the client.
    const dir = join(home, '.local', 'state', 'cairn');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'sender.lock'), `${process.pid} ${Date.now()}`);
    const quick = await hook(env, 'post-tool-use', {
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_response: 'a b',
      tool_use_id: 'boot-1',
    });
    expect(quick.stderr).toBe('');
    expect(caches(home)).toEqual([]);
    const first = await hook(env, 'stop', stopFields(1));
    expect(first.stderr).toBe('');
    const [name] = caches(home);
    expect(name).toMatch(
      new RegExp(`^client-[0-9a-f]{16}-${process.version.replace(/\./g, '\\.')}-${process.arch}\\.v8cache$`),
    );
    const file = join(home, '.local', 'state', 'cairn', name!);
    const written = readFileSync(file);
    const second = await hook(env, 'stop', stopFields(2));
    expect(second.stderr).toBe('');
    // Accepted: not rewritten.
    expect(readFileSync(file).equals(written)).toBe(true);
    const sent = server.requests
      .filter((r) => r.method === 'POST')
      .flatMap((r) =>
        r.path === '/api/events/batch' ? (r.json!.events as Array<Record<string, unknown>>) : [r.json ?? {}],
      );
    expect(sent.map((e) => e.tool_use_id ?? e.last_assistant_message)).toEqual(
      expect.arrayContaining(['boot-1', 'turn 1 done', 'turn 2 done']),
    );
  }, 30_000);

  it('replaces a damaged cache and removes caches of other builds', async () => {
    const { home, env } = machine(server.url);
    env.CAIRN_SENDER = 'off';
    await hook(env, 'post-tool-use', {
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_response: 'a',
      tool_use_id: 'boot-3',
    });
    const [name] = caches(home);
    const dir = join(home, '.local', 'state', 'cairn');
    writeFileSync(join(dir, name!), 'not a code cache');
    writeFileSync(join(dir, `client-0000000000000000-${process.version}-${process.arch}.v8cache`), 'an older build');
    const run = await hook(env, 'post-tool-use', {
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_response: 'b',
      tool_use_id: 'boot-4',
    });
    expect(run.stderr).toBe('');
    expect(caches(home)).toEqual([name]);
    expect(readFileSync(join(dir, name!)).length).toBeGreaterThan(10_000);
    expect(server.requests.some((r) => r.json?.tool_use_id === 'boot-4')).toBe(true);
  }, 30_000);
});
