// The HTTP hook door against another local account (issue 37): a listener started first on the door's port (a
// second user, uid 65534, where the machine allows it) must not be trusted, must learn nothing usable, and the
// client must say so loudly and fall back to command hooks; a captured nonce must not be replayable; the door
// holds a bounded number of connections. Built client, real sender processes, fake cairn server.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClient } from '../../build.mjs';
import { probeDoor } from '../../src/door/proof';
import { MAX_CONNECTIONS } from '../../src/sender/listen';
import { run } from '../../src/run';
import { fakeServer, hookJson, machine, memIo, tempDir, type FakeServer } from '../support';

const CLIENT = fileURLToPath(new URL('../../dist/cairn.cjs', import.meta.url));
const AS_ROOT = process.getuid?.() === 0;

let server: FakeServer;
const stopping: Array<() => Promise<unknown>> = [];
beforeAll(async () => {
  await buildClient({ quiet: true });
  server = await fakeServer();
}, 60_000);
afterAll(async () => {
  for (const stop of stopping) await stop();
  await server.close();
});

function cairn(env: Record<string, string | undefined>, args: string[], stdin = '') {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
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
const readJson = (p: string) => JSON.parse(readFileSync(p, 'utf8'));
const stored = (session: string) => [...server.stored.values()].filter((e) => e.session_id === session);

/** A machine with `cairn install` done: its settings file, the door's port and nonce as install chose them. */
async function installed() {
  const { home, env } = machine(server.url);
  env.CAIRN_SENDER_IDLE_MS = '60000';
  const repo = tempDir('cairn-repo-');
  const settingsPath = join(repo, 'settings.json');
  const r = await cairn({ ...env, PATH: tempDir('cairn-path-') }, [
    'install',
    '--client',
    CLIENT,
    '--no-mcp',
    '--settings',
    settingsPath,
  ]);
  expect(r.code, r.stderr).toBe(0);
  stopping.push(() => cairn(env, ['sender', '--stop']));
  const door = () => readJson(join(stateDir(home), 'door.json')) as { port: number; nonce: string; taken: unknown };
  return { home, env, repo, settingsPath, door, settings: () => readJson(settingsPath) };
}

/**
 * A listener on `port` that is not cairn's, started first, writing every request it gets to a file: run as
 * another account (uid 65534) when the tests run as root, else as this one.
 */
async function squatter(port: number): Promise<{ requests: () => string; stop: () => void }> {
  const dir = tempDir('cairn-squat-');
  chmodSync(dir, 0o777);
  const log = join(dir, 'requests.log');
  const script = `
    const fs = require('node:fs');
    require('node:http').createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }) + '\\n');
        // What a squatter could try: a proof it does not have, and 200 for every hook.
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ proof: 'ab'.repeat(32) }));
      });
    }).listen(${port}, '127.0.0.1', () => console.log('listening'));`;
  const child: ChildProcess = spawn(process.execPath, ['-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
    ...(AS_ROOT ? { uid: 65534, gid: 65534 } : {}),
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`squatter exited ${code}`)));
  });
  const stop = () => void child.kill('SIGKILL');
  stopping.push(async () => stop());
  return { requests: () => (existsSync(log) ? readFileSync(log, 'utf8') : ''), stop };
}

const filled = (headers: Record<string, string>, vars: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(headers).map(([k, v]) => [k, v.replace(/^\$(\w+)$/, (_, n: string) => vars[n] ?? '')]),
  );

const tool = (session: string, id: string, cwd: string) =>
  hookJson({
    session_id: session,
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_input: { command: `echo ${id}` },
    tool_response: { stdout: id },
    tool_use_id: id,
    cwd,
  });

async function post(port: number, body: string, nonce: string) {
  const r = await fetch(`http://127.0.0.1:${port}/cairn/hook/post-tool-use`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', 'x-cairn-nonce': nonce },
  });
  return { status: r.status, text: await r.text() };
}

function startSender(env: Record<string, string | undefined>): ChildProcess {
  const child = execFile(process.execPath, [CLIENT, 'sender'], { env: env as NodeJS.ProcessEnv });
  stopping.push(async () => void child.kill('SIGTERM'));
  return child;
}

const doorUp = (port: number) =>
  until(`the door on ${port}`, async () => (await probeDoor(port, 'x'.repeat(32), 1_000)) !== 'free');

describe('the HTTP hook door on a shared machine', () => {
  it(`is chosen at random at install, and a listener ${AS_ROOT ? 'of another account (uid 65534)' : 'started first'} on it is not trusted: the door closes, the settings get command hooks, and it is said in sender.log, cairn status, the status line and the next context`, async () => {
    const m = await installed();
    const { port, nonce } = m.door();
    expect(port).toBeGreaterThanOrEqual(20_000);
    expect(port).toBeLessThan(32_768);
    expect(m.settings().hooks.PostToolUse[0].hooks[0].url).toBe(`http://127.0.0.1:${port}/cairn/hook/post-tool-use`);
    const squat = await squatter(port);
    startSender(m.env);
    await until('the door closed', () => (m.door().taken ? true : null));
    // New sessions no longer POST anywhere: PostToolUse is a command hook again, and no secret is in the settings.
    const after = m.settings();
    expect(after.hooks.PostToolUse[0].hooks[0]).toMatchObject({
      type: 'command',
      command: 'node',
      args: [CLIENT, 'hook', 'post-tool-use'],
    });
    expect(after.env?.CAIRN_SENDER_NONCE).toBeUndefined();
    expect(JSON.stringify(after)).not.toContain('/cairn/hook/');
    // The nonce that listener might have seen is not the door's any more.
    expect(m.door().nonce).not.toBe(nonce);
    await until('the log line', () =>
      readFileSync(join(stateDir(m.home), 'sender.log'), 'utf8').includes('HOOK DOOR CLOSED'),
    );
    const status = await cairn(m.env, ['status']);
    expect(status.stdout).toMatch(
      new RegExp(`door: +CLOSED since .*127\\.0\\.0\\.1:${port} is held by a listener that is not cairn's`),
    );
    // A session started before (its settings env still has the old nonce) is told, on its status line and in its
    // next prompt's context, shown to the user.
    const sessionEnv = { ...m.env, CAIRN_SENDER_NONCE: nonce };
    const line = await cairn(sessionEnv, ['statusline'], JSON.stringify({ session_id: 's1', cwd: m.repo }));
    expect(line.stdout).toContain('hook door taken by another program: restart Claude Code');
    const prompt = await cairn(
      sessionEnv,
      ['hook', 'user-prompt-submit'],
      hookJson({ session_id: 's1', hook_event_name: 'UserPromptSubmit', prompt: 'go on', cwd: m.repo }),
    );
    const out = JSON.parse(prompt.stdout) as {
      systemMessage: string;
      hookSpecificOutput: { additionalContext: string };
    };
    expect(out.systemMessage).toContain(`127.0.0.1:${port}`);
    expect(out.hookSpecificOutput.additionalContext).toContain('Restart Claude Code now');
    // The squatter was asked to prove the door's secret and learned nothing of it.
    const asked = squat.requests();
    expect(asked).toContain('/cairn/door/challenge?c=');
    expect(asked).not.toContain(nonce);
    expect(asked).not.toContain(m.door().nonce);
    squat.stop();
    // `cairn install` again: a new random port and a new secret; the door opens there and refuses the old secret.
    expect(
      (
        await cairn({ ...m.env, PATH: tempDir('cairn-path-') }, [
          'install',
          '--client',
          CLIENT,
          '--no-mcp',
          '--settings',
          m.settingsPath,
        ])
      ).code,
    ).toBe(0);
    const reopened = m.door();
    expect(reopened.taken).toBeNull();
    expect(m.settings().env.CAIRN_SENDER_NONCE).toBe(reopened.nonce);
    await cairn(m.env, ['sender', '--stop']);
    await until(
      'the old sender gone',
      async () => !(await cairn(m.env, ['status'])).stdout.includes('sender:  running'),
    );
    startSender(m.env);
    await doorUp(reopened.port);
    expect(await post(reopened.port, tool('s-replay', 'forged', m.repo), nonce)).toMatchObject({ status: 401 });
    expect((await post(reopened.port, tool('s-ok', 'real', m.repo), reopened.nonce)).status).toBe(200);
    await until('the real call', () => stored('s-ok').length === 1);
    expect(stored('s-replay')).toEqual([]);
  }, 90_000);

  it('re-issues the nonce at every install: a running session keeps the one it started with until it ends, nobody else can use it', async () => {
    const m = await installed();
    const first = m.door().nonce;
    // A session starts with the first nonce (Claude Code puts settings env into its hooks' environment).
    const s1 = `s-old-${Date.now()}`;
    await cairn(
      { ...m.env, CAIRN_SENDER_NONCE: first },
      ['hook', 'session-start'],
      hookJson({ session_id: s1, hook_event_name: 'SessionStart', source: 'startup', cwd: m.repo }),
    );
    expect(
      (
        await cairn({ ...m.env, PATH: tempDir('cairn-path-') }, [
          'install',
          '--client',
          CLIENT,
          '--no-mcp',
          '--settings',
          m.settingsPath,
        ])
      ).code,
    ).toBe(0);
    const second = m.door();
    expect(second.nonce).not.toBe(first);
    expect(m.settings().env.CAIRN_SENDER_NONCE).toBe(second.nonce);
    startSender(m.env);
    await doorUp(second.port);
    // The old nonce: good for the session that started with it, refused for any other ("Ran: npm run deploy").
    expect((await post(second.port, tool(s1, 'still-mine', m.repo), first)).status).toBe(200);
    expect(await post(second.port, tool('s-forged', 'npm run deploy', m.repo), first)).toMatchObject({ status: 401 });
    expect((await post(second.port, tool('s-new', 'new', m.repo), second.nonce)).status).toBe(200);
    await until('both accepted calls', () => stored(s1).length === 1 && stored('s-new').length === 1);
    // Once that session ends, its nonce is good for nothing.
    await cairn(
      { ...m.env, CAIRN_SENDER_NONCE: first },
      ['hook', 'session-end'],
      hookJson({ session_id: s1, hook_event_name: 'SessionEnd', reason: 'exit', cwd: m.repo }),
    );
    expect(await post(second.port, tool(s1, 'after-end', m.repo), first)).toMatchObject({ status: 401 });
    expect(stored('s-forged')).toEqual([]);
  }, 60_000);

  it(`holds at most ${MAX_CONNECTIONS} connections and closes the ones that send no request, then still takes a hook`, async () => {
    const m = await installed();
    const { port, nonce } = m.door();
    startSender(m.env);
    await doorUp(port);
    const sockets: Socket[] = [];
    let closed = 0;
    for (let i = 0; i < 200; i++) {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => {});
      s.on('close', () => closed++);
      sockets.push(s);
    }
    // Past the cap the door closes them at once; the rest it closes when no request came.
    await until('connections past the cap closed', () => closed >= 200 - MAX_CONNECTIONS);
    await until('half-open connections closed', () => closed === 200, 15_000);
    expect((await post(port, tool('s-cap', 'after-flood', m.repo), nonce)).status).toBe(200);
  }, 60_000);

  it('a hook finds a listener that is not cairn’s on the door’s port before any sender starts, closes the door and tells the user', async () => {
    const m = await installed();
    const { port, nonce } = m.door();
    const squat = await squatter(port);
    // In process: the hook's own check (no sender runs, so nothing of ours listens there).
    const io = memIo({
      env: { ...m.env, CAIRN_SENDER_NONCE: nonce },
      stdin: hookJson({ session_id: 's-guard', hook_event_name: 'SessionStart', source: 'startup', cwd: m.repo }),
    });
    expect(await run(['hook', 'session-start'], io)).toBe(0);
    const out = JSON.parse(io.stdout) as { systemMessage: string };
    expect(out.systemMessage).toContain('cairn closed its hook door');
    expect(m.door().taken).toMatchObject({ port });
    expect(m.settings().hooks.PostToolUse[0].hooks[0].type).toBe('command');
    expect(squat.requests()).not.toContain(nonce);
    squat.stop();
  }, 30_000);
});

describe('the door’s proof', () => {
  it('is told apart: nothing listening, cairn’s door with this nonce, and any other listener', async () => {
    const m = await installed();
    const { port, nonce } = m.door();
    expect(await probeDoor(port, nonce, 1_000)).toBe('free');
    startSender(m.env);
    await doorUp(port);
    expect(await probeDoor(port, nonce, 1_000)).toBe('ours');
    expect(await probeDoor(port, `${nonce}x`, 1_000)).toBe('foreign');
  }, 30_000);
});
