// End to end: the built cairn.mjs, run as Claude Code runs it (one process per hook), against `wrangler dev`.
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { mintDevToken, startDevServer } from '../../../scripts/dev-server.mjs';
import { buildClient } from '../../build.mjs';
import { deadPort, tempDir } from '../support';

const CLIENT = fileURLToPath(new URL('../../dist/cairn.cjs', import.meta.url));
const ADMIN = 'e2e-admin-secret';

interface Dev {
  url: string;
  stop(): Promise<void>;
}
let dev: Dev | null = null;
let port = 0;
let persist = '';

function cairn(
  home: string,
  args: string[],
  stdin = '',
  cwd = home,
): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const env = { PATH: process.env.PATH, HOME: home };
  const t = Date.now();
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLIENT, ...args],
      { env, cwd, maxBuffer: 10_000_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr, ms: Date.now() - t }),
    );
    child.stdin!.end(stdin);
  });
}

function machine(name: string, remote: string) {
  const home = tempDir(`cairn-e2e-${name}-`);
  const repo = join(home, 'code', 'widgets');
  mkdirSync(repo, { recursive: true });
  execFileSync('git', ['init', '-q'], { cwd: repo });
  execFileSync('git', ['remote', 'add', 'origin', remote], { cwd: repo });
  writeFileSync(join(repo, 'server.ts'), `// the widget server\n${'export const route = "/widgets";\n'.repeat(100)}`);
  return { home, repo };
}

const hookInput = (session: string, cwd: string, fields: Record<string, unknown>) =>
  JSON.stringify({ session_id: session, transcript_path: join(cwd, 'none.jsonl'), cwd, ...fields });

async function api(token: string, path: string, init: RequestInit = {}) {
  const res = await fetch(`${dev!.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(init.headers ?? {}) },
  });
  return { status: res.status, text: await res.text() };
}

beforeAll(async () => {
  await buildClient({ quiet: true });
  port = await deadPort();
  persist = tempDir('cairn-e2e-state-');
}, 60_000);

afterAll(async () => {
  await dev?.stop();
}, 30_000);

describe('the built client against wrangler dev', () => {
  const laptop = machine('laptop', 'git@github.com:Acme/Widgets.git');
  const desktop = machine('desktop', 'https://github.com/acme/widgets');
  const spooled: string[] = [];
  let token = '';

  it('keeps every hook at exit 0 and silent while the server is down, spooling the events', async () => {
    await cairn(laptop.home, ['login', '--url', `http://127.0.0.1:${port}`, '--token', 'not-yet']);
    const s = 'e2e-laptop-session';
    const big = 'const original = 1;\n'.repeat(55_000);
    const steps: Array<[string, Record<string, unknown>]> = [
      ['session-start', { source: 'startup' }],
      ['user-prompt-submit', { prompt: 'migrate the widgets table', prompt_id: 'lp-1' }],
      [
        'pre-tool-use',
        { tool_name: 'Read', tool_input: { file_path: join(laptop.repo, 'server.ts') }, tool_use_id: 'l0' },
      ],
      [
        'post-tool-use',
        {
          tool_name: 'Bash',
          tool_input: { command: 'npm run migrate-widgets' },
          tool_response: { stdout: 'migrated 12 rows', stderr: '', interrupted: false, isImage: false },
          tool_use_id: 'l1',
        },
      ],
      [
        'post-tool-use',
        {
          tool_name: 'mcp__db__query',
          tool_input: { sql: 'select count(*) from widgets' },
          tool_response: '12',
          tool_use_id: 'l2',
        },
      ],
      [
        'post-tool-use',
        {
          tool_name: 'mcp__docs__fetch',
          tool_input: { url: 'x' },
          tool_response: [{ type: 'text', text: 'doc' }],
          tool_use_id: 'l3',
        },
      ],
      [
        'post-tool-use',
        {
          tool_name: 'Edit',
          tool_input: { file_path: 'C:\\work\\widgets\\server.ts', old_string: big, new_string: `${big}//` },
          tool_response: { filePath: 'C:\\work\\widgets\\server.ts', originalFile: big },
          tool_use_id: 'l4',
        },
      ],
      ['stop', { last_assistant_message: 'Migrated the widgets table; 12 rows moved.' }],
      ['session-end', { reason: 'prompt_input_exit' }],
    ];
    for (const [event, fields] of steps) {
      const r = await cairn(laptop.home, ['hook', event], hookInput(s, laptop.repo, fields));
      expect(r.code, event).toBe(0);
      expect(r.stdout, event).toBe('');
    }
    const lines = readFileSync(join(laptop.home, '.local', 'state', 'cairn', 'spool.jsonl'), 'utf8')
      .trim()
      .split('\n');
    for (const l of lines) spooled.push(JSON.stringify(JSON.parse(l)));
    expect(lines.map((l) => JSON.parse(l).kind)).toEqual([
      'init',
      'observation',
      'observation',
      'observation',
      'observation',
      'summarize',
      'end',
    ]);
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(100_000);
  }, 60_000);

  it('delivers the spool once the server is back, and the server holds every event exactly once', async () => {
    dev = (await startDevServer({
      port,
      persistTo: persist,
      vars: { CAIRN_ADMIN_SECRET: ADMIN },
      timeoutMs: 120_000,
    })) as Dev;
    token = await mintDevToken(dev.url, ADMIN, { team: 'e2e', user: 'me', device: 'laptop' });
    await cairn(laptop.home, ['login', '--url', dev.url, '--token', token]);
    const flush = await cairn(laptop.home, ['flush']);
    expect(flush.stdout).toContain('7 of 7 events delivered');
    expect(flush.code).toBe(0);
    // Send the same events again: each is recognised as already stored.
    const events = spooled.map((l) => {
      const e = JSON.parse(l) as { kind: string; body: { event_id: string } };
      return { kind: e.kind, ...e.body };
    });
    const again = await api(token, '/api/events/batch', { method: 'POST', body: JSON.stringify({ events }) });
    expect(again.status).toBe(200);
    const results = (JSON.parse(again.text) as { results: Array<{ event_id: string; duplicate?: boolean }> }).results;
    expect(results.map((r) => r.event_id)).toEqual(events.map((e) => e.event_id));
    expect(results.every((r) => r.duplicate === true)).toBe(true);
    const status = await cairn(laptop.home, ['status'], '', laptop.repo);
    expect(status.stdout).toContain('token valid');
    expect(status.stdout).toMatch(/spool: +0 events waiting/);
    expect(status.stdout).toContain('project: github.com/acme/widgets');
  }, 180_000);

  it('records a second machine (https clone) into the same project, and it reads the first machine’s memory', async () => {
    const desktopToken = await mintDevToken(dev!.url, ADMIN, { team: 'e2e', user: 'me', device: 'desktop' });
    await cairn(desktop.home, ['login', '--url', dev!.url, '--token', desktopToken]);
    const s = 'e2e-desktop-session';
    for (const [event, fields] of [
      ['user-prompt-submit', { prompt: 'add pagination to the widget list' }],
      [
        'post-tool-use',
        {
          tool_name: 'Write',
          tool_input: { file_path: join(desktop.repo, 'page.ts'), content: 'export const pageSize = 50;' },
          tool_response: { filePath: join(desktop.repo, 'page.ts'), success: true },
          tool_use_id: 'd1',
        },
      ],
      ['session-end', { reason: 'other' }],
    ] as Array<[string, Record<string, unknown>]>) {
      const r = await cairn(desktop.home, ['hook', event], hookInput(s, desktop.repo, fields));
      expect(r.code).toBe(0);
    }
    const projects = JSON.parse((await api(desktopToken, '/api/projects')).text) as {
      projects: Array<{ key: string }>;
    };
    expect(projects.projects.map((p) => p.key).filter((k) => k.includes('widgets'))).toEqual([
      'github.com/acme/widgets',
    ]);
    // The observer runs after ingest; wait for the laptop's work to reach the desktop's session-start context.
    let context = '';
    for (let i = 0; i < 60 && !/migrat/i.test(context); i++) {
      const r = await cairn(
        desktop.home,
        ['hook', 'session-start'],
        hookInput('e2e-desktop-2', desktop.repo, { source: 'startup' }),
      );
      expect(r.code).toBe(0);
      context = r.stdout
        ? (JSON.parse(r.stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput
            .additionalContext
        : '';
      if (!/migrat/i.test(context)) await new Promise((res) => setTimeout(res, 1_000));
    }
    expect(context).toMatch(/migrat/i);
    expect(context.length).toBeLessThan(10_000);
  }, 120_000);

  it("gives a teammate on a third machine the same memory, marked with the author's handle", async () => {
    const mate = machine('teammate', 'https://github.com/Acme/widgets.git');
    const mateToken = await mintDevToken(dev!.url, ADMIN, { team: 'e2e', user: 'bob', device: 'bob-laptop' });
    await cairn(mate.home, ['login', '--url', dev!.url, '--token', mateToken]);
    const r = await cairn(
      mate.home,
      ['hook', 'session-start'],
      hookInput('e2e-teammate-1', mate.repo, { source: 'startup' }),
    );
    expect(r.code).toBe(0);
    const context = (JSON.parse(r.stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput
      .additionalContext;
    expect(context).toMatch(/migrat/i);
    // Rows written by the laptop and desktop (user "me") carry their author's handle for bob.
    expect(context).toMatch(/ @me\b/);
  }, 60_000);

  it('serves the same client it was built with at /install/cairn.mjs', async () => {
    const res = await fetch(`${dev!.url}/install/cairn.mjs`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(readFileSync(CLIENT, 'utf8'));
    const version = execFileSync(process.execPath, [CLIENT, '--version'], { encoding: 'utf8' }).trim();
    expect(res.headers.get('x-cairn-client-version')).toBe(version);
  }, 30_000);
});
