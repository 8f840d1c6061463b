// The service killed mid-turn, as a crash or a deploy would: `wrangler dev` and everything it started get
// SIGKILL while a session's observer call is in flight, then start again on the same state. Every event is
// stored once and the session's summary is stored, within 30 s of the restart (the bound on a stall: a turn
// lease that outlived its process once held the work for 10 minutes). The observer rewords every telling, so
// a turn observed twice would show up as extra rows. Twice: events sent straight to the API before the kill
// and nothing after it (only the object's alarm can bring the work back), and the hooks client firing
// through the kill and after the restart.
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { mintDevToken, startDevServer } from '../../../scripts/dev-server.mjs';
import { buildClient } from '../../../hooks-client/build.mjs';
import { tempDir } from '../../../hooks-client/test/support';
import { startFakeLlm } from '../../support/fake-llm';

const CLIENT = fileURLToPath(new URL('../../../hooks-client/dist/cairn.cjs', import.meta.url));
const ADMIN = 'kill-test-admin-secret';
/** From the restart (the server answering again) to every row stored: the stall this test exists to catch. */
const RESUME_BOUND_MS = 30_000;

interface Dev {
  url: string;
  child: { pid: number; exitCode: number | null; signalCode: string | null; once(e: 'exit', f: () => void): void };
  stop(): Promise<void>;
}

let llm: Awaited<ReturnType<typeof startFakeLlm>>;
let dev: Dev | null = null;
let port = 0;
const persist = tempDir('cairn-kill-state-');

async function start(): Promise<Dev> {
  dev = (await startDevServer({
    port,
    persistTo: persist,
    processGroup: true,
    timeoutMs: 120_000,
    vars: {
      CAIRN_ADMIN_SECRET: ADMIN,
      OBSERVER_PROVIDER: 'anthropic',
      ANTHROPIC_API_KEY: 'kill-test-key',
      ANTHROPIC_BASE_URL: llm.url,
    },
  })) as Dev;
  return dev;
}

/** SIGKILL to wrangler's whole process group (wrangler, workerd, esbuild): nothing gets to clean up. */
async function killTree(d: Dev): Promise<void> {
  const exited = new Promise<void>((r) =>
    d.child.exitCode !== null || d.child.signalCode !== null ? r() : d.child.once('exit', r),
  );
  process.kill(-d.child.pid, 'SIGKILL');
  await exited;
  // The group is gone as a whole: no workerd is left holding the port or the state.
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(-d.child.pid, 0);
    } catch {
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(() => process.kill(-d.child.pid, 0)).toThrow();
  await d.stop();
  dev = null;
}

async function scenario(id: string, opts: { hold?: boolean }): Promise<void> {
  await fetch(`${llm.url}/__scenario/${id}`, {
    method: 'POST',
    body: JSON.stringify({ hold: opts.hold === true, reword: true }),
  });
}
const releaseHeld = (id: string) => fetch(`${llm.url}/__scenario/${id}/release`, { method: 'POST' });
const arrived = async (id: string, n: number) =>
  ((await (await fetch(`${llm.url}/__scenario/${id}?arrived=${n}`)).json()) as { requests: unknown[] }).requests;

async function api(
  token: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${dev!.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

interface Stored {
  titles: string[];
  summaries: number;
  status: Record<string, unknown> | null;
}

/**
 * What D1 holds for the session (read through the viewer's session view, which never calls the session's
 * object: polling must not be what wakes it), and with `status` the object's own counts.
 */
async function stored(token: string, sessionKey: string, status = false): Promise<Stored> {
  const view = await api(token, `/api/viewer/sessions?key=${encodeURIComponent(sessionKey)}`);
  const counts = status ? (await api(token, `/api/sessions/${encodeURIComponent(sessionKey)}/status`)).json : null;
  if (view.status !== 200) return { titles: [], summaries: 0, status: counts };
  const v = view.json as { observations: { title: string | null }[]; summaries: unknown[] };
  return { titles: v.observations.map((o) => o.title ?? ''), summaries: v.summaries.length, status: counts };
}

/** Polls D1 until `done` holds; fails with the last state once the bound since `from` has passed. */
async function storedWithin(
  token: string,
  sessionKey: string,
  from: number,
  done: (s: Stored) => boolean,
): Promise<{ s: Stored; ms: number }> {
  for (;;) {
    const s = await stored(token, sessionKey);
    if (done(s)) return { s: await stored(token, sessionKey, true), ms: Date.now() - from };
    if (Date.now() - from > RESUME_BOUND_MS)
      throw new Error(`not stored within ${RESUME_BOUND_MS / 1000} s of the restart: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Each command's observation appears exactly once (a second telling would carry another "telling n"). */
function eachOnce(titles: string[], commands: string[]): void {
  expect(titles).toHaveLength(commands.length);
  // The fake observer's title quotes the tool input's first 80 characters: each quoted command fits in them.
  for (const c of commands)
    expect(
      titles.filter((t) => t.includes(`"${c}"`)),
      `${c} in ${JSON.stringify(titles)}`,
    ).toHaveLength(1);
}

beforeAll(async () => {
  llm = await startFakeLlm();
  await buildClient({ quiet: true });
  port = 20_000 + Math.floor(Math.random() * 20_000);
}, 60_000);

afterAll(async () => {
  await dev?.stop();
  await llm?.close();
  rmSync(persist, { recursive: true, force: true });
}, 30_000);

describe('wrangler dev killed mid-turn and started again on the same state', () => {
  it('stores every event once and the summary, within 30 s, when the kill comes during the observer call', async () => {
    let d = await start();
    const token = await mintDevToken(d.url, ADMIN, { team: 'kill-direct', user: 'dev', device: 'laptop' });
    const sid = `kill-direct-${Date.now()}`;
    const scen = `kd${Date.now().toString(36)}`;
    await scenario(scen, { hold: true });
    const at = Date.now();
    const base = { session_id: sid, project: 'github.com/acme/widgets', cwd: '/home/dev/widgets' };
    expect(
      (
        await api(token, '/api/sessions/init', {
          ...base,
          event_id: `${sid}-init`,
          occurred_at: at,
          prompt: 'Speed up the importer',
        })
      ).status,
    ).toBe(202);
    const commands = [
      'npm run import -- --profile',
      'grep -n parseLine importer.ts',
      'npm test -- importer',
      'git diff --stat',
    ];
    for (const [i, c] of commands.entries()) {
      const command = i === 0 ? `${c} # SCENARIO:${scen}` : c;
      commands[i] = command;
      const sent = await api(token, '/api/sessions/observations', {
        ...base,
        event_id: `${sid}-tool-${i}`,
        occurred_at: at + i + 1,
        tool_name: 'Bash',
        tool_use_id: `${sid}-tu-${i}`,
        tool_input: { command },
        tool_response: { stdout: `ran step ${i}`, exit_code: 0 },
      });
      expect(sent.status).toBe(202);
    }
    expect(
      (
        await api(token, '/api/sessions/summarize', {
          ...base,
          event_id: `${sid}-stop`,
          occurred_at: at + 10,
          last_assistant_message: 'The importer parses lines in one pass now.',
        })
      ).status,
    ).toBe(202);

    // The observer has the session's first turn and holds it: the kill comes while the call is in flight.
    await arrived(scen, 1);
    await killTree(d);
    await releaseHeld(scen);
    await scenario(scen, {});

    d = await start();
    const restarted = Date.now();
    const { s, ms } = await storedWithin(
      token,
      sid,
      restarted,
      (x) => x.titles.length >= commands.length && x.summaries >= 1,
    );
    console.log(`kill during the observer call: all stored ${ms} ms after the restart`);
    eachOnce(s.titles, commands);
    expect(s.summaries).toBe(1);
    expect(s.status).toMatchObject({ pending: 0, in_flight: 0, dead_letters: [] });
    // The dead call was asked again after the restart: the rows come from later tellings.
    expect((await arrived(scen, 2)).length).toBeGreaterThanOrEqual(2);
    expect(s.titles.every((t) => !t.includes('(telling 1)'))).toBe(true);
  }, 300_000);

  it('stores every event once and the summary, within 30 s, when hooks keep firing through the client across the kill', async () => {
    let d = dev ?? (await start());
    const token = await mintDevToken(d.url, ADMIN, { team: 'kill-hooks', user: 'dev', device: 'laptop' });
    const home = tempDir('cairn-kill-home-');
    const repo = join(home, 'code', 'widgets');
    mkdirSync(repo, { recursive: true });
    execFileSync('git', ['init', '-q'], { cwd: repo });
    execFileSync('git', ['remote', 'add', 'origin', 'git@github.com:acme/widgets.git'], { cwd: repo });
    writeFileSync(join(repo, 'importer.ts'), 'export const parse = (l: string) => l.split(",");\n');
    // No background sender: each hook spools its event and sends what the spool holds, as Claude Code runs it.
    const env = { PATH: process.env.PATH, HOME: home, CAIRN_SENDER: 'off' };
    const cairn = (args: string[], stdin = '') =>
      new Promise<number>((resolve) => {
        const child = execFile(process.execPath, [CLIENT, ...args], { env, cwd: repo, timeout: 60_000 }, (err) =>
          resolve(err ? Number((err as { code?: number }).code ?? 1) : 0),
        );
        child.stdin!.end(stdin);
      });
    const sid = `kill-hooks-${Date.now()}`;
    const scen = `kh${Date.now().toString(36)}`;
    const hook = (event: string, fields: Record<string, unknown>) =>
      cairn(
        ['hook', event],
        JSON.stringify({ session_id: sid, transcript_path: join(repo, 'none.jsonl'), cwd: repo, ...fields }),
      );
    const commands = Array.from(
      { length: 12 },
      (_, i) => `node import.js r${String(i).padStart(2, '0')}${i === 0 ? ` # SCENARIO:${scen}` : ''}`,
    );
    const tool = (i: number) =>
      hook('post-tool-use', {
        tool_name: 'Bash',
        tool_input: { command: commands[i] },
        tool_response: { stdout: `imported ${i} rows`, stderr: '', interrupted: false, isImage: false },
        tool_use_id: `${sid}-tu-${i}`,
      });

    expect(await cairn(['login', '--url', d.url, '--token', token])).toBe(0);
    await scenario(scen, { hold: true });
    expect(await hook('session-start', { source: 'startup' })).toBe(0);
    expect(
      await hook('user-prompt-submit', { prompt: 'Make the importer stream its rows', prompt_id: `${sid}-p1` }),
    ).toBe(0);
    for (let i = 0; i < 4; i++) expect(await tool(i)).toBe(0);
    // The observer holds the first turn; the kill comes while it is in flight, and the hooks go on meanwhile.
    await arrived(scen, 1);
    await killTree(d);
    for (let i = 4; i < 8; i++) expect(await tool(i)).toBe(0);
    await releaseHeld(scen);
    await scenario(scen, {});

    const restarting = start();
    for (let i = 8; i < 10; i++) expect(await tool(i)).toBe(0);
    d = await restarting;
    const restarted = Date.now();
    for (let i = 10; i < 12; i++) expect(await tool(i)).toBe(0);
    expect(await hook('stop', { last_assistant_message: 'The importer streams rows now; memory stays flat.' })).toBe(0);
    expect(await hook('session-end', { reason: 'prompt_input_exit' })).toBe(0);
    expect(await cairn(['flush'])).toBe(0);

    const { s, ms } = await storedWithin(
      token,
      sid,
      restarted,
      (x) => x.titles.length >= commands.length && x.summaries >= 1,
    );
    console.log(`kill while hooks fire: all stored ${ms} ms after the restart`);
    eachOnce(s.titles, commands);
    expect(s.summaries).toBe(1);
    expect(s.status).toMatchObject({ pending: 0, in_flight: 0, dead_letters: [] });
    rmSync(home, { recursive: true, force: true });
  }, 300_000);
});
