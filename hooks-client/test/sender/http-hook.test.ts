// No process per tool call: Claude Code's HTTP hook POSTs PostToolUse to the background sender on 127.0.0.1
// (the request shape is the one the pinned CLI sends: JSON body, the secret in a header from an allowed env
// var). Built client, real sender process, fake cairn server. The POSTed event must come out exactly as the
// command hook's; anything else knocking on the door gets a 4xx and stores nothing; with no sender running,
// Stop's transcript reconciliation sends the call, so nothing is lost either way.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClient } from '../../build.mjs';
import { fakeServer, hookJson, machine, tempDir, type FakeServer } from '../support';

const CLIENT = fileURLToPath(new URL('../../dist/cairn.cjs', import.meta.url));

let server: FakeServer;
const started: Array<Record<string, string | undefined>> = [];
beforeAll(async () => {
  await buildClient({ quiet: true });
  server = await fakeServer();
}, 60_000);
afterAll(async () => {
  // Every sender this file started is asked to leave (they are detached from the test process).
  for (const env of started) await cairn(env, ['sender', '--stop']);
  await server.close();
});

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

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function until<T>(
  what: string,
  probe: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  ms = 20_000,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const stateDir = (home: string) => join(home, '.local', 'state', 'cairn');
const stored = (session: string) => [...server.stored.values()].filter((e) => e.session_id === session);

/** A machine whose sender listens on its own free port, its secret as Claude Code would have it from settings env. */
async function httpMachine() {
  const { home, env } = machine(server.url);
  env.CAIRN_SENDER_PORT = String(await freePort());
  env.CAIRN_SENDER_IDLE_MS = '60000';
  // `cairn install` makes the secret and writes it into settings env; the hook reads it from there.
  const repo = tempDir('cairn-repo-');
  await cairn({ ...env, PATH: tempDir('cairn-path-') }, [
    'install',
    '--client',
    CLIENT,
    '--no-mcp',
    '--settings',
    join(repo, 'settings.json'),
  ]);
  const settings = JSON.parse(readFileSync(join(repo, 'settings.json'), 'utf8')) as {
    env: Record<string, string>;
    hooks: Record<string, Array<{ hooks: Array<{ url?: string; headers?: Record<string, string> }> }>>;
  };
  const handler = settings.hooks.PostToolUse![0]!.hooks[0]!;
  return { home, env, repo, nonce: settings.env.CAIRN_SENDER_NONCE!, url: handler.url!, headers: handler.headers! };
}

/** What Claude Code does for an HTTP hook: headers with the allowed variables filled in, the hook input as the body. */
async function post(
  url: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; json: Record<string, unknown> | null }> {
  const r = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const text = await r.text();
  return { status: r.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : null };
}

const filled = (headers: Record<string, string>, vars: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(headers).map(([k, v]) => [k, v.replace(/^\$(\w+)$/, (_, name: string) => vars[name] ?? '')]),
  );

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

describe('PostToolUse as an HTTP hook to the background sender', () => {
  it('is answered by the sender SessionStart started, and reaches the server redacted exactly as the command hook’s event', async () => {
    const m = await httpMachine();
    started.push(m.env);
    const s = `s-http-${Date.now()}`;
    await cairn(
      m.env,
      ['hook', 'session-start'],
      hookJson({ session_id: s, hook_event_name: 'SessionStart', source: 'startup', cwd: m.repo }),
    );
    const secret = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
    const sensitive = {
      tool_input: { command: `git push https://${secret}@github.com/acme/x` },
      tool_response: 'pushed <private>the vault code</private> ok',
      cwd: m.repo,
    };
    const headers = filled(m.headers, { CAIRN_SENDER_NONCE: m.nonce });
    const r = await until('the sender’s door', async () => {
      try {
        return await post(m.url, tool(s, 'via-http', sensitive), headers);
      } catch {
        return null;
      }
    });
    expect(r).toEqual({ status: 200, json: null });
    // The same call through the command hook, in the same run.
    expect((await cairn(m.env, ['hook', 'post-tool-use'], tool(s, 'via-command', sensitive))).code).toBe(0);
    const events = await until('both events', () => (stored(s).length === 2 ? stored(s) : null));
    const byId = (id: string) => events.find((e) => e.tool_use_id === id)!;
    for (const e of events) {
      expect(JSON.stringify(e)).not.toContain(secret);
      expect(JSON.stringify(e)).not.toContain('the vault code');
    }
    const same = (e: Record<string, unknown>) => ({
      kind: e.kind,
      tool_name: e.tool_name,
      tool_input: e.tool_input,
      tool_response: e.tool_response,
      project: e.project,
      cwd: e.cwd,
    });
    expect(same(byId('via-http'))).toEqual(same(byId('via-command')));
    expect(readFileSync(join(stateDir(m.home), 'sender.log'), 'utf8')).toMatch(/hooks on 127\.0\.0\.1:\d+/);
  }, 60_000);

  it('refuses a wrong secret, a browser’s Origin, a foreign Host, another path and a body that is not JSON, storing none of them', async () => {
    const m = await httpMachine();
    started.push(m.env);
    mkdirSync(stateDir(m.home), { recursive: true });
    const sender = execFile(process.execPath, [CLIENT, 'sender'], { env: m.env as NodeJS.ProcessEnv });
    try {
      const s = `s-refused-${Date.now()}`;
      const good = filled(m.headers, { CAIRN_SENDER_NONCE: m.nonce });
      await until('the sender’s door', async () => {
        try {
          return (await post(m.url, '{', good)).status === 400;
        } catch {
          return false;
        }
      });
      const body = tool(s, 'refused', { cwd: m.repo });
      expect(await post(m.url, body, { ...good, 'x-cairn-nonce': 'x'.repeat(32) })).toMatchObject({
        status: 401,
        json: { error: 'bad_nonce' },
      });
      expect(await post(m.url, body, filled(m.headers, {}))).toMatchObject({
        status: 401,
        json: { error: 'bad_nonce' },
      });
      expect(await post(m.url, body, { ...good, origin: 'https://evil.example' })).toMatchObject({
        status: 403,
        json: { error: 'forbidden_origin' },
      });
      expect(await post(m.url.replace('post-tool-use', 'stop'), body, good)).toMatchObject({
        status: 404,
        json: { error: 'not_found' },
      });
      expect(await post(m.url, body, { ...good, 'content-type': 'text/plain' })).toMatchObject({
        status: 415,
        json: { error: 'not_json' },
      });
      expect(await post(m.url, 'not json', good)).toMatchObject({ status: 400, json: { error: 'bad_json' } });
      expect(await post(m.url, '{"session_id":"x"}', good)).toMatchObject({
        status: 400,
        json: { error: 'missing_cwd' },
      });
      // A rebound DNS name reaches 127.0.0.1 with its own Host.
      const port = new URL(m.url).port;
      const rebound = await new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            path: '/cairn/hook/post-tool-use',
            method: 'POST',
            headers: { ...good, host: `evil.example:${port}`, 'content-type': 'application/json' },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      expect(rebound).toBe(403);
      // The right request still works, and only it arrives.
      expect((await post(m.url, tool(s, 'accepted', { cwd: m.repo }), good)).status).toBe(200);
      await until('the accepted call', () => stored(s).some((e) => e.tool_use_id === 'accepted'));
      expect(stored(s).map((e) => e.tool_use_id)).toEqual(['accepted']);
    } finally {
      sender.kill('SIGTERM');
    }
  }, 60_000);

  it('loses nothing when no sender runs: the POST is refused, and Stop sends the call from the transcript', async () => {
    const m = await httpMachine();
    const s = `s-down-${Date.now()}`;
    // A live-looking lock of another process: no hook starts a sender, so the door stays shut.
    mkdirSync(stateDir(m.home), { recursive: true });
    writeFileSync(join(stateDir(m.home), 'sender.lock'), `${process.pid} ${Date.now()}`);
    await expect(
      post(m.url, tool(s, 'tu-lost', { cwd: m.repo }), filled(m.headers, { CAIRN_SENDER_NONCE: m.nonce })),
    ).rejects.toThrow();
    const transcript = join(m.repo, 't.jsonl');
    const user = (content: unknown, extra: Record<string, unknown> = {}) => ({
      type: 'user',
      sessionId: s,
      message: { role: 'user', content },
      ...extra,
    });
    const assistant = (content: unknown) => ({
      type: 'assistant',
      sessionId: s,
      message: { role: 'assistant', content },
    });
    writeFileSync(
      transcript,
      [
        user('print it', { promptId: 'p1' }),
        assistant([{ type: 'tool_use', id: 'tu-lost', name: 'Bash', input: { command: 'echo tu-lost' } }]),
        user([{ type: 'tool_result', tool_use_id: 'tu-lost', content: 'tu-lost' }]),
        assistant([{ type: 'text', text: 'Printed.' }]),
      ]
        .map((l) => JSON.stringify(l))
        .join('\n'),
    );
    await cairn(
      m.env,
      ['hook', 'stop'],
      hookJson({
        session_id: s,
        prompt_id: 'p1',
        hook_event_name: 'Stop',
        stop_hook_active: false,
        last_assistant_message: 'Printed.',
        transcript_path: transcript,
        cwd: m.repo,
      }),
    );
    expect(stored(s).map((e) => `${e.kind}:${e.tool_use_id ?? ''}`)).toEqual(['observation:tu-lost', 'summarize:']);
  }, 60_000);
});
