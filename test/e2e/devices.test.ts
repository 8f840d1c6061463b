// Devices and people (issue 36) with the real Claude Code CLI: three HOMEs as three machines against one `wrangler
// dev` (real D1, Durable Objects, the observer through the real Anthropic SDK to a fake on 127.0.0.1) and a scripted
// agent model. Machine A and machine B are the same person (two device tokens), machine C a teammate. A session on A
// keeps a todo list; `cairn continue --last` on B (another clone of the repository) makes B's next session start with
// what A was on and what is open; C continues it by its id. A personal note made on A in one project is in B's session
// in another project and in none of C's.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { mintDevToken, startDevServer } from '../../scripts/dev-server.mjs';
// @ts-expect-error plain ESM script without types
import { buildAll } from '../../scripts/build.mjs';
import { deadPort } from '../../hooks-client/test/support';
import { startFakeAgentModel, type AgentRequest, type FakeAgentModel } from '../support/fake-agent-model';
import { startFakeLlm } from '../support/fake-llm';
import { cairn, claudePrint, newMachine, pinnedClaudeVersion, waitFor, type Machine } from './support';

const ADMIN = 'e2e-devices-admin';
const TEAM = 'e2e-devices';
const GIT = ['-c', 'user.name=Ana', '-c', 'user.email=ana@example.com', '-c', 'commit.gpgsign=false'];

interface Dev {
  url: string;
  stop(): Promise<void>;
}

let dev: Dev;
let observer: { url: string; close(): Promise<void> };
let model: FakeAgentModel;
let a: Machine;
let b: Machine;
let c: Machine;
const tokens: Record<'a' | 'b' | 'c', string> = { a: '', b: '', c: '' };

/** The agent-loop requests of one scenario, in order (side requests offer no tools). */
const loop = (scenario: string): AgentRequest[] =>
  model.requests.filter((r) => r.scenario === scenario && Array.isArray(r.body.tools) && r.body.tools.length > 0);

interface ToolResult {
  type: 'tool_result';
  is_error?: boolean;
  content?: unknown;
}

/** Every tool_result block of a request's messages. */
const toolResults = (messages: Array<{ role: string; content: unknown }>): ToolResult[] =>
  messages.flatMap((m) =>
    Array.isArray(m.content)
      ? (m.content as { type?: string }[]).filter((b): b is ToolResult => b?.type === 'tool_result')
      : [],
  );

async function flushed(on: Machine): Promise<void> {
  const r = await cairn(on, ['flush', '--timeout', '30']);
  expect(r.code, r.stdout + r.stderr).toBe(0);
}

async function login(on: Machine, token: string): Promise<void> {
  expect((await cairn(on, ['login', '--url', dev.url, '--token', token])).code).toBe(0);
  const install = await cairn(on, ['install']);
  expect(install.code, install.stderr).toBe(0);
}

/** Machine `on`'s repository replaced by a clone of A's (the same commits), with the shared remote. */
function cloneOf(on: Machine, from: Machine): void {
  rmSync(on.repo, { recursive: true, force: true });
  execFileSync('git', ['clone', '-q', from.repo, on.repo]);
  execFileSync('git', ['remote', 'set-url', 'origin', 'git@github.com:acme/widgets.git'], { cwd: on.repo });
}

/** A second repository (another project: its own remote) on machine `on`, trusted by its Claude Code. */
function otherProject(on: Machine): string {
  const repo = join(on.home, 'code', 'gadgets');
  mkdirSync(repo, { recursive: true });
  execFileSync('git', ['init', '-q'], { cwd: repo });
  execFileSync('git', ['remote', 'add', 'origin', 'git@github.com:acme/gadgets.git'], { cwd: repo });
  writeFileSync(join(repo, 'README.md'), '# gadgets\n');
  const settings = join(on.home, '.claude.json');
  const json = JSON.parse(execFileSync('cat', [settings], { encoding: 'utf8' })) as {
    projects: Record<string, unknown>;
  };
  json.projects[repo] = { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true };
  writeFileSync(settings, JSON.stringify(json));
  return repo;
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
      RATE_LIMIT_READ_PER_MIN: '6000',
    },
    timeoutMs: 180_000,
  })) as Dev;
  tokens.a = await mintDevToken(dev.url, ADMIN, { team: TEAM, user: 'ana', device: 'laptop-a' });
  tokens.b = await mintDevToken(dev.url, ADMIN, { team: TEAM, user: 'ana', device: 'desktop-b' });
  tokens.c = await mintDevToken(dev.url, ADMIN, { team: TEAM, user: 'ben', device: 'ben-laptop' });
  a = newMachine(model.url);
  execFileSync('git', [...GIT, 'add', '-A'], { cwd: a.repo });
  execFileSync('git', [...GIT, 'commit', '-q', '-m', 'widget routes'], { cwd: a.repo });
  b = newMachine(model.url);
  cloneOf(b, a);
  c = newMachine(model.url);
  cloneOf(c, a);
  for (const [m, t] of [
    [a, tokens.a],
    [b, tokens.b],
    [c, tokens.c],
  ] as const)
    await login(m, t);
}, 400_000);

afterAll(async () => {
  await dev?.stop();
  await model?.close();
  await observer?.close();
}, 60_000);

describe(`Claude Code ${pinnedClaudeVersion()} on three machines`, () => {
  let sessionA = '';

  it("continues machine A's session on machine B (cairn continue --last): B's next session names the task and its open items", async () => {
    const file = join(a.repo, 'routes.ts');
    // 2.1.332 keeps its todo list with the Task tools, which it defers (offered by name only: fetched with
    // ToolSearch "select:…" before a call): three tasks, the first done, the second started. Tasks are numbered from 1.
    model.script('dev-a', [
      [{ type: 'tool_use', name: 'ToolSearch', input: { query: 'select:TaskCreate,TaskUpdate' } }],
      [
        {
          type: 'tool_use',
          name: 'TaskCreate',
          input: { subject: 'Add the limiter to POST /login', description: 'x' },
        },
        { type: 'tool_use', name: 'TaskCreate', input: { subject: 'Write the limiter tests', description: 'x' } },
        {
          type: 'tool_use',
          name: 'TaskCreate',
          input: { subject: 'Document the login limit in the README', description: 'x' },
        },
      ],
      [
        {
          type: 'tool_use',
          name: 'Edit',
          input: { file_path: file, old_string: 'route1 = "/widgets/1"', new_string: 'route1 = "/login/limited"' },
        },
        { type: 'tool_use', name: 'TaskUpdate', input: { taskId: '1', status: 'completed' } },
        { type: 'tool_use', name: 'TaskUpdate', input: { taskId: '2', status: 'in_progress' } },
      ],
      [{ type: 'text', text: 'The login route is rate-limited now; its tests and the README note are still open.' }],
    ]);
    const r = await claudePrint(a, 'SCENARIO:dev-a rate-limit the login route', [
      'ToolSearch',
      'TaskCreate',
      'TaskUpdate',
      'Edit',
    ]);
    expect(r.code, r.stderr).toBe(0);
    // The tasks were made (their results reached the model), not refused as unknown tools. Only the tool results are
    // looked at: the system reminder that lists the deferred tools names InputValidationError itself.
    const results = toolResults(loop('dev-a').at(-1)?.body.messages ?? []);
    expect(results.length).toBeGreaterThanOrEqual(6);
    for (const r of results) expect(r.is_error ?? false, JSON.stringify(r).slice(0, 600)).toBe(false);
    sessionA = r.sessionId;
    await flushed(a);

    // B: another clone, the same person's other device. The handoff is kept for B's checkout …
    const cont = await waitFor('the handoff of A to have its todos', async () => {
      const x = await cairn(b, ['continue', '--last']);
      return x.code === 0 && x.stdout.includes('2 open todos') ? x : null;
    });
    expect(cont.stdout).toContain(`session ${sessionA} (@ana/laptop-a)`);
    expect(cont.stdout).toContain('This checkout: on ');
    expect(cont.stdout).toContain('the same commit');
    // … and B's next session starts with it.
    model.script('dev-b', [[{ type: 'text', text: 'Picking up the limiter tests.' }]]);
    const onB = await claudePrint(b, 'SCENARIO:dev-b where was I?', ['Read']);
    expect(onB.code, onB.stderr).toBe(0);
    const first = loop('dev-b')[0]!.raw;
    expect(first).toContain('# cairn handoff');
    expect(first).toContain('rate-limit the login route');
    // The open todos: the started and the pending task, not the completed one (which is in what the session did).
    const open = /## Open \(unfinished todos\)(.*?)## Where it was/.exec(first)?.[1] ?? '';
    expect(open).toContain('[in progress] Write the limiter tests');
    expect(open).toContain('Document the login limit in the README');
    expect(open).not.toContain('Add the limiter to POST /login');
    expect(first).toContain('the same commit');
    // Once: the session after it starts without the handoff.
    model.script('dev-b2', [[{ type: 'text', text: 'ok' }]]);
    await claudePrint(b, 'SCENARIO:dev-b2 hello', ['Read']);
    expect(loop('dev-b2')[0]!.raw).not.toContain('# cairn handoff');
  });

  it("continues the same team-project session on a teammate's machine by its id, with a handoff note", async () => {
    expect(sessionA).not.toBe('');
    const note = await cairn(a, ['handoff', '--session', sessionA, 'The limiter keeps its buckets in memory for now.']);
    expect(note.code, note.stderr).toBe(0);
    const cont = await cairn(c, ['continue', sessionA]);
    expect(cont.code, cont.stderr).toBe(0);
    expect(cont.stdout).toContain('1 handoff note');
    model.script('dev-c', [[{ type: 'text', text: 'I will take the README part.' }]]);
    const onC = await claudePrint(c, 'SCENARIO:dev-c what did Ana leave open?', ['Read']);
    expect(onC.code, onC.stderr).toBe(0);
    const first = loop('dev-c')[0]!.raw;
    expect(first).toContain('# cairn handoff');
    expect(first).toContain('@ana/laptop-a');
    expect(first).toContain('rate-limit the login route');
    expect(first).toContain('Document the login limit in the README');
    expect(first).toContain('The limiter keeps its buckets in memory for now.');
  });

  it("brings a personal note made on A in one project into B's session in another project, and into none of C's", async () => {
    const note = await cairn(a, ['remember', '--personal', 'I use pnpm, never npm (ocelot-7)']);
    expect(note.code, note.stderr).toBe(0);
    const gadgetsB = otherProject(b);
    model.script('dev-p-b', [[{ type: 'text', text: 'Noted.' }]]);
    const onB = await claudePrint({ ...b, repo: gadgetsB }, 'SCENARIO:dev-p-b install the deps', ['Read']);
    expect(onB.code, onB.stderr).toBe(0);
    expect(loop('dev-p-b')[0]!.raw).toContain('I use pnpm, never npm (ocelot-7)');
    const gadgetsC = otherProject(c);
    model.script('dev-p-c', [[{ type: 'text', text: 'Noted.' }]]);
    await claudePrint({ ...c, repo: gadgetsC }, 'SCENARIO:dev-p-c install the deps', ['Read']);
    model.script('dev-p-c2', [[{ type: 'text', text: 'Noted.' }]]);
    await claudePrint(c, 'SCENARIO:dev-p-c2 install the deps', ['Read']);
    for (const s of ['dev-p-c', 'dev-p-c2']) expect(loop(s)[0]!.raw).not.toContain('ocelot-7');
  });
});
