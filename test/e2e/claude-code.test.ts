// The real Claude Code CLI, headless (`claude -p`), with cairn installed by `cairn install`, against
// `wrangler dev` (real D1, Durable Objects, observer through the real Anthropic SDK to a fake on 127.0.0.1)
// and a scripted agent model on 127.0.0.1. Nothing leaves the machine.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { describeChanges, recordPayloads, SAMPLE } from '../../scripts/claude-payloads.mjs';
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
  claudeInteractive,
  claudePrint,
  newMachine,
  pinnedClaudeVersion,
  ROOT,
  runProcess,
  waitFor,
  type Machine,
} from './support';

const ADMIN = 'e2e-claude-admin';
const RUNS = Number(process.env.CAIRN_E2E_RUNS ?? 20);

interface Dev {
  url: string;
  stop(): Promise<void>;
}
interface SessionView {
  session: { id: number };
  summaries: Array<{ request: string; completed: string }>;
  observations: Array<{ id: number; title: string | null }>;
}

let dev: Dev;
let observer: { url: string; close(): Promise<void> };
let model: FakeAgentModel;
let m: Machine;
let token = '';

async function api<T>(path: string): Promise<{ status: number; body: T | null }> {
  const res = await fetch(`${dev.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  return { status: res.status, body: res.ok ? (JSON.parse(text) as T) : null };
}

const sessionView = async (sessionId: string) =>
  (await api<SessionView>(`/api/viewer/sessions?key=${encodeURIComponent(sessionId)}`)).body;

/** Waits until the session has at least `observations` observations and one summary (the observer is async). */
const stored = (sessionId: string, observations = 1) =>
  waitFor(`session ${sessionId} to be observed and summarised`, async () => {
    const v = await sessionView(sessionId);
    return v && v.observations.length >= observations && v.summaries.length >= 1 ? v : null;
  });

/** The agent-loop requests of one scenario, in order (side requests offer no tools). */
const loop = (scenario: string): AgentRequest[] =>
  model.requests.filter((r) => r.scenario === scenario && Array.isArray(r.body.tools) && r.body.tools.length > 0);

const spoolPending = (home: string) => {
  const f = join(home, '.local', 'state', 'cairn', 'spool.jsonl');
  return existsSync(f) ? readFileSync(f, 'utf8').trim() : '';
};

/**
 * Every event the hooks wrote is on the server: what a hook could not send in its budget (a busy server can
 * take longer than SessionEnd's 0.9 s) is sent by the next hook or `cairn flush`, which must leave nothing.
 */
async function allDelivered(on: Machine = m): Promise<void> {
  // The plugin's machine has no `cairn login`: its hooks get the server from the plugin options.
  const r = await cairn({ ...on, env: { ...on.env, CAIRN_URL: dev.url, CAIRN_TOKEN: token } }, [
    'flush',
    '--timeout',
    '30',
  ]);
  expect(r.code, r.stdout + r.stderr).toBe(0);
  expect(spoolPending(on.home)).toBe('');
}

beforeAll(async () => {
  await buildAll({ quiet: true });
  observer = await startFakeLlm();
  model = await startFakeAgentModel();
  dev = (await startDevServer({
    port: await deadPort(),
    snapshot: true,
    // Every session of this file reads with the same few tokens (context, MCP, status): the per-token read limit
    // (120 a minute) has its own tests, and here it answered the plugin's MCP server 429 and dropped its context.
    vars: {
      CAIRN_ADMIN_SECRET: ADMIN,
      OBSERVER_PROVIDER: 'anthropic',
      ANTHROPIC_API_KEY: 'test-observer-key',
      ANTHROPIC_BASE_URL: observer.url,
      RATE_LIMIT_READ_PER_MIN: '6000',
    },
    timeoutMs: 180_000,
  })) as Dev;
  token = await mintDevToken(dev.url, ADMIN, { team: 'e2e-claude', user: 'dev', device: 'laptop' });
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

describe(`Claude Code ${pinnedClaudeVersion()} headless with cairn installed`, () => {
  let firstSession = '';
  let firstView: SessionView | null = null;

  it('runs the pinned CLI', async () => {
    const r = await runProcess(claudeBinary(), ['--version'], { env: m.env, cwd: m.repo });
    expect(r.stdout).toContain(pinnedClaudeVersion());
  });

  it('sends hook payloads with the events and fields of the committed sample (npm run claude:payloads re-records it)', async () => {
    const committed = JSON.parse(readFileSync(SAMPLE, 'utf8')) as { claude_code: string };
    expect(committed.claude_code).toBe(pinnedClaudeVersion());
    const now = (await recordPayloads()) as { claude_code: string };
    expect(describeChanges(committed, now)).toBe('');
  });

  it('stores the observations and the summary of a session that edits a file and runs a failing, then a passing command', async () => {
    const file = join(m.repo, 'routes.ts');
    model.script('e2e-s1', [
      [
        { type: 'text', text: 'Let me look at the routes.' },
        { type: 'tool_use', name: 'Read', input: { file_path: file } },
      ],
      [
        {
          type: 'tool_use',
          name: 'Edit',
          input: { file_path: file, old_string: 'route7 = "/widgets/7"', new_string: 'route7 = "/gadgets/7"' },
        },
      ],
      [
        {
          type: 'tool_use',
          name: 'Bash',
          input: { command: 'node -e "process.exit(3)"', description: 'Run the route check' },
        },
      ],
      [
        {
          type: 'tool_use',
          name: 'Bash',
          input: { command: 'node -e "console.log(\'routes ok\')"', description: 'Run the route check again' },
        },
      ],
      [{ type: 'text', text: 'Renamed the seventh route to /gadgets/7; the route check passes now.' }],
    ]);
    const r = await claudePrint(m, 'SCENARIO:e2e-s1 rename the seventh widget route to gadgets', [
      'Read',
      'Edit',
      'Bash',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.result).toContain('/gadgets/7');
    expect(readFileSync(file, 'utf8')).toContain('route7 = "/gadgets/7"');
    // The failing command reached the model as an error, the passing one as output.
    const results = JSON.stringify(loop('e2e-s1').at(-1)?.body.messages);
    expect(results).toContain('routes ok');
    firstSession = r.sessionId;
    await allDelivered();
    firstView = await stored(r.sessionId, 2);
    expect(firstView.summaries[0]!.request.length).toBeGreaterThan(0);
  });

  it('gives the next session the stored memory in <cairn-context>, file notes on a Read, and the record through MCP search', async () => {
    expect(firstView).not.toBeNull();
    const record = firstView!.observations[0]!;
    const query = (record.title ?? '')
      .split(/\W+/)
      .filter((w) => w.length > 3)
      .slice(0, 3)
      .join(' ');
    expect(query).not.toBe('');
    model.script('e2e-s2', [
      [{ type: 'tool_use', name: 'Read', input: { file_path: join(m.repo, 'routes.ts') } }],
      [{ type: 'tool_use', name: 'mcp__cairn__search', input: { query } }],
      [{ type: 'text', text: 'Found what we did last time.' }],
    ]);
    const r = await claudePrint(m, 'SCENARIO:e2e-s2 what did we change in the routes last time?', [
      'Read',
      'mcp__cairn__search',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const [first, afterRead, afterSearch] = loop('e2e-s2');
    expect(first!.raw).toContain('<cairn-context>');
    expect(afterRead!.raw).toContain('cairn has notes on');
    expect(afterRead!.raw).toContain('routes.ts');
    // The MCP tool's answer, as the model got it: the record from session 1.
    const lastUser = JSON.stringify(afterSearch!.body.messages!.at(-1));
    expect(lastUser).toContain('tool_result');
    expect(lastUser).toContain(String(record.id));
    expect(r.sessionId).not.toBe(firstSession);
  });

  it('lists cairn as a connected MCP server', async () => {
    const r = await runProcess(claudeBinary(), ['mcp', 'list'], { env: m.env, cwd: m.repo, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/cairn:.*Connected/);
  });

  it('leaves nothing on the server for a wholly <private> prompt (its tool calls and summary never leave the machine)', async () => {
    model.script('e2e-private', [
      [{ type: 'tool_use', name: 'Bash', input: { command: 'echo zebra-quartz-41', description: 'Print the secret' } }],
      [{ type: 'text', text: 'Printed it.' }],
    ]);
    const r = await claudePrint(m, '<private>SCENARIO:e2e-private print zebra-quartz-41</private>', ['Bash']);
    expect(r.code, r.stderr).toBe(0);
    await allDelivered();
    // Give the observer the time it takes to store an ordinary session, then look.
    model.script('e2e-after-private', [
      [{ type: 'tool_use', name: 'Bash', input: { command: 'ls', description: 'List files' } }],
      [{ type: 'text', text: 'Listed.' }],
    ]);
    const ordinary = await claudePrint(m, 'SCENARIO:e2e-after-private list the files', ['Bash']);
    await allDelivered();
    await stored(ordinary.sessionId);
    const view = await sessionView(r.sessionId);
    expect(view?.observations ?? []).toEqual([]);
    expect(view?.summaries ?? []).toEqual([]);
    const search = await api<{ results: unknown[] }>(`/api/search?q=${encodeURIComponent('zebra-quartz-41')}&kind=all`);
    expect(search.body?.results ?? []).toEqual([]);
  });

  it(`stores the tool call and the summary of every one of ${RUNS} headless sessions in a row`, async () => {
    const sessions: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      model.script(`e2e-run-${i}`, [
        [{ type: 'tool_use', name: 'Bash', input: { command: `echo run-${i}`, description: `Run ${i}` } }],
        [{ type: 'text', text: `Run ${i} printed its number.` }],
      ]);
      const r = await claudePrint(m, `SCENARIO:e2e-run-${i} print the run number`, ['Bash']);
      expect(r.code, r.stderr).toBe(0);
      sessions.push(r.sessionId);
    }
    expect(new Set(sessions).size).toBe(RUNS);
    await allDelivered();
    for (const s of sessions) {
      const v = await stored(s);
      expect(v.observations.length).toBeGreaterThanOrEqual(1);
      expect(v.summaries.length).toBeGreaterThanOrEqual(1);
    }
  });

  it('delivers PostToolUse through the HTTP hook while the sender runs, and through Stop’s transcript reconciliation while it is stopped: nothing lost either way', async () => {
    const state = join(m.home, '.local', 'state', 'cairn');
    const settings = JSON.parse(readFileSync(join(m.home, '.claude', 'settings.json'), 'utf8')) as {
      hooks: Record<string, Array<{ hooks: Array<{ type: string }> }>>;
    };
    expect(settings.hooks.PostToolUse!.flatMap((g) => g.hooks.map((h) => h.type))).toEqual(['http']);
    /** The hook failures Claude Code wrote into the session's transcript (a refused POST is one, per call). */
    const hookErrors = (sessionId: string) => {
      const files = readdirSync(join(m.home, '.claude', 'projects'), { recursive: true, encoding: 'utf8' }).filter(
        (f) => f.endsWith(`${sessionId}.jsonl`),
      );
      return files.flatMap((f) =>
        readFileSync(join(m.home, '.claude', 'projects', f), 'utf8')
          .split('\n')
          .filter((l) => l.includes('hook_non_blocking_error')),
      );
    };
    const run = async (id: string, env: Record<string, string>) => {
      const markers = [1, 2, 3].map((i) => `${id}-marker-${i}`);
      model.script(id, [
        ...markers.map((x) => [
          { type: 'tool_use' as const, name: 'Bash', input: { command: `echo ${x}`, description: `Print ${x}` } },
        ]),
        [{ type: 'text', text: 'Printed all three.' }],
      ]);
      const r = await claudePrint({ ...m, env }, `SCENARIO:${id} print three markers`, ['Bash']);
      expect(r.code, r.stderr).toBe(0);
      await allDelivered();
      const v = await stored(r.sessionId, 3);
      const titles = JSON.stringify(v.observations.map((o) => o.title));
      for (const x of markers) expect(titles).toContain(x);
      return r.sessionId;
    };
    // Running (SessionStart made sure of it): every POST answered, no hook error in the transcript.
    const open = await run('e2e-door-open', m.env);
    expect(readFileSync(join(state, 'sender.log'), 'utf8')).toMatch(/hooks on 127\.0\.0\.1:\d+/);
    expect(hookErrors(open)).toEqual([]);
    // Stopped, and kept stopped for this session (CAIRN_SENDER=off: no hook starts one): each POST is refused,
    // Claude Code goes on, and Stop sends the three calls from the transcript.
    await cairn(m, ['sender', '--stop']);
    await waitFor('the sender to leave', async () => (existsSync(join(state, 'sender.lock')) ? null : true), 30_000);
    const closed = await run('e2e-door-closed', { ...m.env, CAIRN_SENDER: 'off' });
    expect(hookErrors(closed).filter((l) => l.includes('ECONNREFUSED'))).toHaveLength(3);
  });

  it('stores an interactive session (under tmux) and gives it the memory in <cairn-context>', async () => {
    model.script('e2e-tty', [
      [{ type: 'tool_use', name: 'Bash', input: { command: 'echo interactive-run', description: 'Print a marker' } }],
      [{ type: 'text', text: 'Interactive turn finished (mark-7q).' }],
    ]);
    const r = await claudeInteractive(m, 'SCENARIO:e2e-tty print a marker', ['Bash'], 'mark-7q');
    expect(r.screen).toContain('Interactive turn finished');
    expect(loop('e2e-tty')[0]!.raw).toContain('<cairn-context>');
    await allDelivered();
    const v = await stored(r.sessionId);
    expect(v.observations.length).toBeGreaterThanOrEqual(1);
  });

  it('works the same installed as a plugin from the repository’s marketplace, offline', async () => {
    const p = newMachine(model.url);
    const claude = (args: string[]) => runProcess(claudeBinary(), args, { env: p.env, cwd: p.repo, timeoutMs: 60_000 });
    const added = await claude(['plugin', 'marketplace', 'add', ROOT]);
    expect(added.code, added.stdout + added.stderr).toBe(0);
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
    model.script('e2e-plugin', [
      [{ type: 'tool_use', name: 'Bash', input: { command: 'echo from-the-plugin', description: 'Print a marker' } }],
      [{ type: 'text', text: 'The plugin recorded this.' }],
    ]);
    const r = await claudePrint(p, 'SCENARIO:e2e-plugin print a marker', ['Bash']);
    expect(r.code, r.stderr).toBe(0);
    expect(loop('e2e-plugin')[0]!.raw).toContain('<cairn-context>');
    await allDelivered(p);
    const v = await stored(r.sessionId);
    expect(v.observations.length).toBeGreaterThanOrEqual(1);
    const list = await claude(['mcp', 'list']);
    expect(list.stdout).toMatch(/cairn.*Connected/);
  });

  it('uninstalls cleanly: Claude Code starts and answers without cairn’s hooks or MCP server', async () => {
    const r = await cairn(m, ['uninstall']);
    expect(r.code, r.stderr).toBe(0);
    // install created the settings file, so uninstall removes it; either way no cairn hook may be left.
    const settings = join(m.home, '.claude', 'settings.json');
    expect(existsSync(settings) ? readFileSync(settings, 'utf8') : '').not.toContain('cairn');
    expect(readFileSync(join(m.home, '.claude.json'), 'utf8')).not.toMatch(/"cairn"/);
    model.script('e2e-uninstalled', [[{ type: 'text', text: 'Hello without memory.' }]]);
    const before = model.requests.length;
    const after = await claudePrint(m, 'SCENARIO:e2e-uninstalled say hello', []);
    expect(after.code, after.stderr).toBe(0);
    expect(after.result).toBe('Hello without memory.');
    expect(after.stderr).not.toMatch(/hook/i);
    expect(model.requests.slice(before).some((q) => q.raw.includes('<cairn-context>'))).toBe(false);
    const list = await runProcess(claudeBinary(), ['mcp', 'list'], { env: m.env, cwd: m.repo, timeoutMs: 60_000 });
    expect(list.stdout).not.toContain('cairn');
  });
});
