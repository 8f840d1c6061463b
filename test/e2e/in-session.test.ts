// Memory seen and steered from inside the real Claude Code CLI (pinned version, scripted model, wrangler dev):
// the status line on the interactive screen, /compact followed by the "this session so far" block, /cairn:pause
// stopping the recording of its session, the commands and skill listed by `claude` for `cairn install`
// users and for the plugin, and /cairn:prime run from a headless session.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { mintDevToken, startDevServer } from '../../scripts/dev-server.mjs';
// @ts-expect-error plain ESM script without types
import { buildAll } from '../../scripts/build.mjs';
import { deadPort } from '../../hooks-client/test/support';
import { startFakeAgentModel, type AgentRequest, type FakeAgentModel } from '../support/fake-agent-model';
import { startFakeLlm } from '../support/fake-llm';
import {
  cairn,
  claudeBinary,
  newMachine,
  pinnedClaudeVersion,
  ROOT,
  runProcess,
  waitFor,
  type Machine,
} from './support';

const ADMIN = 'e2e-in-session-admin';
const COMMANDS = ['cairn:status', 'cairn:pause', 'cairn:resume', 'cairn:forget', 'cairn:remember', 'cairn:prime'];

let dev: { url: string; stop(): Promise<void> };
let observer: { url: string; close(): Promise<void> };
let model: FakeAgentModel;
let m: Machine;
let token = '';

const loop = (scenario: string): AgentRequest[] =>
  model.requests.filter((r) => r.scenario === scenario && Array.isArray(r.body.tools) && r.body.tools.length > 0);

async function sessionView(sessionId: string) {
  const res = await fetch(`${dev.url}/api/viewer/sessions?key=${encodeURIComponent(sessionId)}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return res.ok
    ? ((await res.json()) as { observations: Array<{ id: number; title: string | null }>; summaries: unknown[] })
    : null;
}

const stored = (sessionId: string) =>
  waitFor(`session ${sessionId} to be observed`, async () => {
    const v = await sessionView(sessionId);
    return v && v.observations.length >= 1 && v.summaries.length >= 1 ? v : null;
  });

async function flushed(): Promise<void> {
  const r = await cairn(m, ['flush', '--timeout', '30']);
  expect(r.code, r.stdout + r.stderr).toBe(0);
}

/** The `init` message of a headless run: what Claude Code loaded (slash commands, skills). */
async function init(on: Machine): Promise<{ slash_commands: string[]; skills: string[] }> {
  const r = await runProcess(
    claudeBinary(),
    ['-p', 'SCENARIO:e2e-init hello', '--output-format', 'stream-json', '--verbose'],
    { env: on.env, cwd: on.repo, timeoutMs: 90_000 },
  );
  const line = r.stdout.split('\n').find((l) => l.includes('"subtype":"init"'));
  expect(line, r.stdout.slice(0, 500) + r.stderr).toBeDefined();
  return JSON.parse(line!) as { slash_commands: string[]; skills: string[] };
}

beforeAll(async () => {
  await buildAll({ quiet: true });
  observer = await startFakeLlm();
  model = await startFakeAgentModel();
  dev = (await startDevServer({
    port: await deadPort(),
    snapshot: true,
    vars: {
      CAIRN_ADMIN_SECRET: ADMIN,
      OBSERVER_PROVIDER: 'anthropic',
      ANTHROPIC_API_KEY: 'test-observer-key',
      ANTHROPIC_BASE_URL: observer.url,
    },
    timeoutMs: 180_000,
  })) as typeof dev;
  token = await mintDevToken(dev.url, ADMIN, { team: 'e2e-in-session', user: 'dev', device: 'laptop' });
  m = newMachine(model.url);
  expect((await cairn(m, ['login', '--url', dev.url, '--token', token])).code).toBe(0);
  const install = await cairn(m, ['install']);
  expect(install.code, install.stderr).toBe(0);
}, 300_000);

afterAll(async () => {
  await dev?.stop();
  await model?.close();
  await observer?.close();
}, 60_000);

describe(`Claude Code ${pinnedClaudeVersion()}: cairn inside the session`, () => {
  it('lists the /cairn:* commands and the cairn-memory skill that `cairn install` put in place', async () => {
    model.script('e2e-init', [[{ type: 'text', text: 'Hello.' }]]);
    const loaded = await init(m);
    for (const c of COMMANDS) expect(loaded.slash_commands).toContain(c);
    expect(loaded.skills).toContain('cairn-memory');
  });

  it('lists the same commands and skill from the plugin installed from the repository’s marketplace, and its /cairn:status reaches the server with the plugin’s login', async () => {
    const p = newMachine(model.url);
    const claude = (args: string[]) => runProcess(claudeBinary(), args, { env: p.env, cwd: p.repo, timeoutMs: 60_000 });
    expect((await claude(['plugin', 'marketplace', 'add', ROOT])).code).toBe(0);
    const installed = await claude([
      'plugin',
      'install',
      'cairn@cairn',
      '--config',
      `url=${dev.url}`,
      '--config',
      `token=${token}`,
    ]);
    expect(installed.code, installed.stdout + installed.stderr).toBe(0);
    const loaded = await init(p);
    for (const c of COMMANDS) expect(loaded.slash_commands).toContain(c);
    expect(
      loaded.skills.some((s) => /(^|:)cairn-memory$/.test(s)),
      loaded.skills.join(','),
    ).toBe(true);
    // A command's `!` line gets no plugin variables: it reads the login the plugin's SessionStart hook kept.
    const seen = model.requests.length;
    const status = await runProcess(claudeBinary(), ['-p', '/cairn:status', '--output-format', 'json'], {
      env: p.env,
      cwd: p.repo,
      timeoutMs: 90_000,
    });
    expect(status.code, status.stdout + status.stderr).toBe(0);
    const shown = model.requests
      .slice(seen)
      .map((r) => r.raw)
      .find((raw) => raw.includes('server:  '));
    expect(shown, 'the status output in the turn').toBeDefined();
    expect(shown).not.toContain('not configured');
    expect(shown).toContain(`server reachable at ${dev.url}, token valid`);
  });

  it('in one interactive session: the status line on screen, /cairn:pause keeping a turn off the server until /cairn:resume, and /compact followed by the "so far" block before the index', async () => {
    // One conversation: the fake model indexes a scenario's turns by the assistant messages so far.
    model.script('e2e-flow', [
      [{ type: 'tool_use', name: 'Bash', input: { command: 'echo before-compaction', description: 'Print a marker' } }],
      [{ type: 'text', text: 'First turn done (mark-c1).' }],
      [{ type: 'text', text: 'Noted the pause (mark-p0).' }],
      [
        {
          type: 'tool_use',
          name: 'Bash',
          input: { command: 'echo quokkazebra5521', description: 'Print while paused' },
        },
      ],
      [{ type: 'text', text: 'Printed while paused (mark-p1).' }],
      [{ type: 'text', text: 'Noted the resume (mark-r0).' }],
      [{ type: 'text', text: 'Summary of the session so far.' }],
    ]);
    // After the compaction the conversation starts over from its summary: any turn answers the same.
    model.script(
      'e2e-compact-2',
      Array.from({ length: 6 }, () => [{ type: 'text' as const, text: 'Second turn done (mark-c2).' }]),
    );
    const sock = join(m.home, 'tmux-flow.sock');
    const tmux = (...args: string[]) => execFileSync('tmux', ['-S', sock, ...args], { encoding: 'utf8' });
    const envArgs = Object.entries(m.env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    const command = [claudeBinary(), '--allowedTools', 'Bash'].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    tmux('new-session', '-d', '-s', 'e2e', '-x', '180', '-y', '50', '-c', m.repo, ...envArgs, command);
    const screen = () => tmux('capture-pane', '-p', '-t', 'e2e');
    const type = (text: string) => {
      tmux('send-keys', '-t', 'e2e', '-l', text);
      tmux('send-keys', '-t', 'e2e', 'Enter');
    };
    const onScreen = (what: string, re: RegExp, ms = 120_000) =>
      waitFor(what, async () => re.exec(screen())?.[0] ?? null, ms);
    let sessionId = '';
    try {
      await onScreen('the interactive prompt', /❯/, 60_000);
      type('SCENARIO:e2e-flow print a marker');
      await onScreen('the first turn', /mark-c1/);
      // The status line: Claude Code runs `cairn statusline` and shows its line under the prompt; with the server's
      // receipts (issue 34) it says how many memories the session used (and how many were stale) instead of `recalled`.
      expect(
        await onScreen(
          'the status line',
          /cairn [●○] \S+ remembered · (?:\d+ recalled|\d+ memor(?:y|ies) used(?:, \d+ stale)?) · \d+ waiting · \S+/,
          60_000,
        ),
      ).toMatch(/recalled|used/);
      sessionId = await waitFor('the session id in the transcript', async () => {
        const r = await runProcess(
          '/bin/sh',
          ['-c', `ls -t "${join(m.home, '.claude', 'projects')}"/*/*.jsonl | head -1`],
          { env: m.env, cwd: m.repo },
        );
        const f = r.stdout.trim();
        return f ? f.replace(/^.*\//, '').replace(/\.jsonl$/, '') : null;
      });
      await flushed();
      await stored(sessionId);
      // Once the server holds the session, the status line counts it (its cache is asked again within 30 s).
      await onScreen('the remembered count', /cairn [●○] [1-9]\d* remembered/, 90_000);
      type('/cairn:pause');
      await onScreen('the pause answered', /mark-p0/);
      await onScreen('the status line saying paused', /cairn ⏸ .*paused \(this session, until resumed\)/, 60_000);
      type('print the paused marker');
      await onScreen('the paused turn', /mark-p1/);
      type('/cairn:resume');
      await onScreen('the resume answered', /mark-r0/);
      type('/compact');
      const transcript = join(
        m.home,
        '.claude',
        'projects',
        m.repo.replace(/[^A-Za-z0-9]/g, '-'),
        `${sessionId}.jsonl`,
      );
      await waitFor(
        'the compaction in the transcript',
        async () =>
          existsSync(transcript) && readFileSync(transcript, 'utf8').includes('compact_boundary') ? true : null,
        120_000,
      );
      await new Promise((r) => setTimeout(r, 3_000));
      type('SCENARIO:e2e-compact-2 go on');
      await waitFor(
        'the turn after the compaction',
        async () => (loop('e2e-compact-2').length > 0 ? true : null),
        120_000,
      );
      await onScreen('the second turn', /mark-c2/);
    } finally {
      try {
        tmux('kill-server');
      } catch {
        // already gone
      }
    }
    const after = loop('e2e-compact-2')[0]!;
    expect(after.raw).toContain('<cairn-session-so-far>');
    expect(after.raw).toContain('before-compaction');
    expect(after.raw.indexOf('<cairn-session-so-far>')).toBeLessThan(after.raw.lastIndexOf('<cairn-context>'));
    // Nothing of the paused turn reached the server.
    await flushed();
    await new Promise((r) => setTimeout(r, 5_000));
    expect(JSON.stringify(await sessionView(sessionId))).not.toContain('quokkazebra5521');
    const search = await fetch(`${dev.url}/api/search?q=${encodeURIComponent('quokkazebra5521')}&kind=all`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(((await search.json()) as { results: unknown[] }).results).toEqual([]);
  });
  it('primes the repository from /cairn:prime in a headless session: its README outline and commit stored as [primed] notes, the second run storing nothing', async () => {
    writeFileSync(join(m.repo, 'README.md'), '# Widgets\n\nRoutes widget requests.\n\n## Routing\n\n## Caching\n');
    const g = (...args: string[]) =>
      execFileSync(
        'git',
        ['-c', 'user.name=Ada', '-c', 'user.email=ada@example.com', '-c', 'commit.gpgsign=false', ...args],
        { cwd: m.repo, stdio: 'ignore' },
      );
    g('add', 'README.md', 'routes.ts');
    g('commit', '-q', '-m', 'Describe the widget routes');
    const prime = () =>
      runProcess(claudeBinary(), ['-p', '/cairn:prime', '--output-format', 'json'], {
        env: m.env,
        cwd: m.repo,
        timeoutMs: 120_000,
      });
    const first = await prime();
    expect(first.code, first.stdout + first.stderr).toBe(0);
    // The command's output reached the model's turn: what `!` ran is part of the prompt.
    expect(
      model.requests.some(
        (r) =>
          r.raw.includes('primed 2 notes from github.com/acme/widgets') &&
          r.raw.includes('2 stored, 0 already in memory'),
      ),
    ).toBe(true);
    const index = await (
      await fetch(`${dev.url}/api/context?project=github.com%2Facme%2Fwidgets`, {
        headers: { authorization: `Bearer ${token}` },
      })
    ).text();
    const primed = index.split('\n').filter((l) => l.includes('[primed]'));
    expect(primed.map((l) => l.replace(/^\**\d+\** \S+ \S+ \**/, '').replace(/\** \[primed\].*$/, '')).sort()).toEqual([
      'Describe the widget routes',
      'README.md: Widgets',
    ]);
    const again = await prime();
    expect(again.code).toBe(0);
    expect(model.requests.some((r) => r.raw.includes('0 stored, 2 already in memory'))).toBe(true);
  });
});
