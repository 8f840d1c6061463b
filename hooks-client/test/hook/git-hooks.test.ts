// The hooks send the checkout's branch and commit with every event, and its git view with SessionStart's index request.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../src/run';
import { fakeServer, hookJson, machine, memIo, tempDir, type FakeServer } from '../support';

let server: FakeServer;
beforeAll(async () => {
  server = await fakeServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  server.handler = undefined;
  server.context = { index: '', file: '', prompt: '' };
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=a@b', '-c', 'user.name=a', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    stdio: 'pipe',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd },
  })
    .toString()
    .trim();

async function hook(event: string, fields: Record<string, unknown>, env = machine(server.url).env) {
  const io = memIo({ env, stdin: hookJson(fields) });
  return run(['hook', event], io);
}

function checkout(): { dir: string; main: string; feature: string } {
  const dir = join(tempDir('cairn-gh-'), 'widgets');
  mkdirSync(dir);
  git(dir, 'init', '-q');
  git(dir, 'commit', '-q', '--allow-empty', '-m', 'base');
  const main = git(dir, 'rev-parse', 'HEAD');
  git(dir, 'switch', '-q', '-c', 'feature-x');
  git(dir, 'commit', '-q', '--allow-empty', '-m', 'work');
  return { dir, main, feature: git(dir, 'rev-parse', 'HEAD') };
}

describe('git branch and commit on the wire', () => {
  it('sends the branch and HEAD commit with the prompt and with tool events, the commit current at each event', async () => {
    const r = checkout();
    const env = machine(server.url).env;
    await hook('user-prompt-submit', { cwd: r.dir, prompt: 'rename the widgets table' }, env);
    git(r.dir, 'commit', '-q', '--allow-empty', '-m', 'more');
    const after = git(r.dir, 'rev-parse', 'HEAD');
    await hook(
      'post-tool-use',
      { cwd: r.dir, tool_name: 'Bash', tool_input: { command: 'git commit' }, tool_response: 'ok', tool_use_id: 'g-1' },
      env,
    );
    const sent = server.requests
      .filter((q) => q.method === 'POST')
      .flatMap((q) => (q.json!.events as Record<string, unknown>[] | undefined) ?? [q.json!]);
    expect(sent.map((e) => [e.git_branch, e.git_commit])).toEqual([
      ['feature-x', r.feature],
      ['feature-x', after],
    ]);
  });

  it('sends a detached HEAD’s commit without a branch, and neither outside a repository', async () => {
    const r = checkout();
    git(r.dir, 'checkout', '-q', '--detach', r.main);
    const env = machine(server.url).env;
    await hook('user-prompt-submit', { cwd: r.dir, prompt: 'look at the old build' }, env);
    await hook('user-prompt-submit', { cwd: tempDir(), prompt: 'no repository here' }, env);
    const [detached, none] = server.requests.filter((q) => q.method === 'POST').map((q) => q.json!);
    expect(detached).toMatchObject({ git_commit: r.main });
    expect(detached).not.toHaveProperty('git_branch');
    expect(none).not.toHaveProperty('git_branch');
    expect(none).not.toHaveProperty('git_commit');
  });

  it('asks for the index with branch, head, trunk and the commits reachable from them', async () => {
    const r = checkout();
    await hook('session-start', { cwd: r.dir, source: 'startup' });
    const req = server.requests.find((q) => q.path.startsWith('/api/context?'))!;
    const q = new URL(req.path, 'http://x').searchParams;
    expect(q.get('branch')).toBe('feature-x');
    expect(q.get('head')).toBe(r.feature);
    expect(q.get('trunk')).toBe('main');
    expect(q.get('history')!.split(',')).toEqual([r.feature.slice(0, 12), r.main.slice(0, 12)]);
  });

  it('asks for the index without git fields outside a repository', async () => {
    await hook('session-start', { cwd: tempDir(), source: 'startup' });
    const q = new URL(server.requests.find((x) => x.path.startsWith('/api/context?'))!.path, 'http://x').searchParams;
    expect([...q.keys()].sort()).toEqual(['project', 'session', 'tz']);
  });
});
