// Branch and HEAD of a real checkout in a temp folder, read from .git files; history from one bounded rev-list.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readGitHead, readGitView } from '../../src/project/git-head';
import { tempDir } from '../support';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=a@b', '-c', 'user.name=a', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    stdio: 'pipe',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd },
  })
    .toString()
    .trim();

function repo(): { dir: string; commit: (msg: string) => string } {
  const dir = join(tempDir('cairn-git-'), 'widgets');
  mkdirSync(dir);
  git(dir, 'init', '-q');
  const commit = (msg: string) => {
    git(dir, 'commit', '-q', '--allow-empty', '-m', msg);
    return git(dir, 'rev-parse', 'HEAD');
  };
  return { dir, commit };
}

describe('reading the branch and HEAD commit of a checkout', () => {
  it('reads the branch and its commit in a normal checkout, also from a subfolder', () => {
    const r = repo();
    const c1 = r.commit('one');
    git(r.dir, 'switch', '-q', '-c', 'feature/login');
    const c2 = r.commit('two');
    mkdirSync(join(r.dir, 'src', 'deep'), { recursive: true });
    expect(readGitHead(r.dir)).toEqual({ branch: 'feature/login', commit: c2 });
    expect(readGitHead(join(r.dir, 'src', 'deep'))).toEqual({ branch: 'feature/login', commit: c2 });
    expect(c1).not.toBe(c2);
  });

  it('finds the commit in packed-refs once the loose refs are packed', () => {
    const r = repo();
    const c1 = r.commit('one');
    git(r.dir, 'pack-refs', '--all');
    expect(readGitHead(r.dir)).toEqual({ branch: 'main', commit: c1 });
  });

  it('reports a detached HEAD as a commit without a branch', () => {
    const r = repo();
    const c1 = r.commit('one');
    r.commit('two');
    git(r.dir, 'checkout', '-q', '--detach', c1);
    expect(readGitHead(r.dir)).toEqual({ branch: null, commit: c1 });
  });

  it('reads a worktree’s own branch and commit, not the main checkout’s', () => {
    const r = repo();
    const c1 = r.commit('one');
    const wt = join(tempDir('cairn-wt-'), 'wt-fix');
    git(r.dir, 'worktree', 'add', '-q', '-b', 'fix-42', wt);
    git(wt, 'commit', '-q', '--allow-empty', '-m', 'fix');
    const fix = git(wt, 'rev-parse', 'HEAD');
    expect(readGitHead(wt)).toEqual({ branch: 'fix-42', commit: fix });
    expect(readGitHead(r.dir)).toEqual({ branch: 'main', commit: c1 });
  });

  it('has a branch but no commit before the first commit', () => {
    const r = repo();
    expect(readGitHead(r.dir)).toEqual({ branch: 'main', commit: null });
  });

  it('gives nothing outside a repository', async () => {
    const dir = tempDir('cairn-norepo-');
    expect(readGitHead(dir)).toBeNull();
    expect(await readGitView(dir)).toBeNull();
  });

  it('does not send a branch name outside the shared rule, but still the commit', () => {
    const r = repo();
    git(r.dir, 'switch', '-q', '-c', 'ümlaut-branch');
    const c1 = r.commit('one');
    expect(readGitHead(r.dir)).toEqual({ branch: null, commit: c1 });
  });
});

describe('the history sent at SessionStart', () => {
  it('holds the commits of HEAD and of merged branches, not those of a branch that never merged', async () => {
    const r = repo();
    const base = r.commit('base');
    git(r.dir, 'switch', '-q', '-c', 'merged-work');
    const merged = r.commit('merged work');
    git(r.dir, 'switch', '-q', 'main');
    git(r.dir, 'merge', '-q', '--no-ff', '-m', 'merge', 'merged-work');
    git(r.dir, 'switch', '-q', '-c', 'abandoned');
    const abandoned = r.commit('abandoned work');
    git(r.dir, 'switch', '-q', 'main');
    git(r.dir, 'switch', '-q', '-c', 'feature-y');
    const mine = r.commit('current work');
    const view = await readGitView(r.dir);
    expect(view).toMatchObject({ branch: 'feature-y', head: mine, trunk: 'main' });
    const abbrev = (c: string) => c.slice(0, 12);
    expect(view!.history).toEqual(expect.arrayContaining([abbrev(base), abbrev(merged), abbrev(mine)]));
    expect(view!.history).not.toContain(abbrev(abandoned));
    expect(view!.history.every((h) => /^[0-9a-f]{12}$/.test(h))).toBe(true);
  });

  it('includes the trunk’s commits when the current branch was cut before them', async () => {
    const r = repo();
    r.commit('base');
    git(r.dir, 'switch', '-q', '-c', 'old-branch');
    git(r.dir, 'switch', '-q', 'main');
    const later = r.commit('later on main');
    git(r.dir, 'switch', '-q', 'old-branch');
    const view = await readGitView(r.dir);
    expect(view!.trunk).toBe('main');
    expect(view!.history).toContain(later.slice(0, 12));
  });

  it('stops at 200 commits however long the history is', async () => {
    const r = repo();
    // One fast-import stream instead of 210 git processes.
    const stream = Array.from(
      { length: 210 },
      (_, i) =>
        `commit refs/heads/main\ncommitter a <a@b> ${1_700_000_000 + i} +0000\ndata 3\nc${String(i).padStart(2, '0').slice(-2)}\n`,
    ).join('');
    execFileSync('git', ['fast-import', '--quiet'], { cwd: r.dir, input: stream, stdio: ['pipe', 'pipe', 'pipe'] });
    const view = await readGitView(r.dir);
    expect(view!.history).toHaveLength(200);
    expect(view!.history[0]).toBe(git(r.dir, 'rev-parse', 'HEAD').slice(0, 12));
  });

  it('runs no git when the hook has no time left for it (a timeout of 0 would mean none)', async () => {
    const r = repo();
    const c1 = r.commit('one');
    expect(await readGitView(r.dir, 0)).toEqual({ branch: 'main', head: c1, trunk: 'main', history: [] });
    expect(await readGitView(r.dir, -5)).toEqual({ branch: 'main', head: c1, trunk: 'main', history: [] });
  });

  it('leaves the history empty when git cannot run, keeping branch and head', async () => {
    const r = repo();
    const c1 = r.commit('one');
    const path = process.env.PATH;
    process.env.PATH = tempDir('cairn-nogit-');
    try {
      expect(await readGitView(r.dir)).toEqual({ branch: 'main', head: c1, trunk: 'main', history: [] });
    } finally {
      process.env.PATH = path;
    }
  });
});
