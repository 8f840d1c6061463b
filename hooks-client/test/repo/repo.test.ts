// hooks-client/src/repo/: the one door to a repository. Blob ids computed in process equal git's for tracked
// regular files and are null for everything else; git runs with the repository's programs off.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configValues } from '../../src/repo/config-file';
import { gitEnv, runGit } from '../../src/repo/git';
import { findRepo, locateRepo } from '../../src/repo/locate';
import { blobIdOf, trackedFiles } from '../../src/repo/tracked';
import { readGitView } from '../../src/project/git-head';
import { tempDir } from '../support';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=a@b', '-c', 'user.name=a', '-c', 'commit.gpgsign=false', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();

function repo(...init: string[]): string {
  const dir = join(tempDir('cairn-repo-'), 'r');
  mkdirSync(join(dir, 'src'), { recursive: true });
  git(dir, 'init', '-q', ...init);
  writeFileSync(join(dir, 'src', 'a.ts'), 'export const a = 1;\n');
  writeFileSync(join(dir, 'README.md'), '# R\n');
  git(dir, 'add', '.');
  git(dir, 'commit', '-q', '-m', 'one');
  return dir;
}

function marker(name: string): { program: string; ran: () => boolean } {
  const dir = tempDir('cairn-trap-');
  const program = join(dir, name);
  writeFileSync(program, `#!/bin/sh\ntouch '${join(dir, 'ran')}'\nexit 1\n`);
  chmodSync(program, 0o755);
  return { program, ran: () => existsSync(join(dir, 'ran')) };
}

describe('blobIdOf', () => {
  it('equals `git hash-object` for a tracked regular file, SHA-1 and SHA-256 repositories alike', () => {
    const sha1 = repo();
    expect(blobIdOf(sha1, 'src/a.ts')).toBe(git(sha1, 'hash-object', 'src/a.ts'));
    expect(blobIdOf(sha1, 'src/a.ts')).toMatch(/^[0-9a-f]{40}$/);
    // Changed in the checkout: the id of what is there now, as git would store it.
    writeFileSync(join(sha1, 'README.md'), '# R, edited\n');
    expect(blobIdOf(sha1, 'README.md')).toBe(git(sha1, 'hash-object', 'README.md'));
    const sha256 = repo('--object-format=sha256');
    expect(blobIdOf(sha256, 'src/a.ts')).toBe(git(sha256, 'hash-object', 'src/a.ts'));
    expect(blobIdOf(sha256, 'src/a.ts')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is null for anything but a tracked regular file under the root', () => {
    const dir = repo();
    const outside = join(tempDir('cairn-out-'), 'secret.txt');
    writeFileSync(outside, 'private\n');
    symlinkSync(outside, join(dir, 'link.txt'));
    writeFileSync(join(dir, 'untracked.txt'), 'new\n');
    mkdirSync(join(dir, 'docs'));
    writeFileSync(join(dir, 'docs', 'secret.txt'), 'tracked\n');
    git(dir, 'add', 'link.txt', 'docs');
    git(dir, 'commit', '-q', '-m', 'two');
    // The tracked docs/ becomes a link out of the checkout.
    renameSync(join(dir, 'docs'), join(dir, 'docs.old'));
    symlinkSync(join(outside, '..'), join(dir, 'docs'));
    for (const rel of [
      'link.txt',
      'untracked.txt',
      'docs/secret.txt',
      '../secret.txt',
      '/etc/passwd',
      'src',
      'src/../README.md',
      'missing.ts',
      '',
    ])
      expect(blobIdOf(dir, rel), rel).toBeNull();
    // Only from the checkout's root: a subfolder is not one.
    expect(blobIdOf(join(dir, 'src'), 'a.ts')).toBeNull();
    expect(blobIdOf(tempDir('cairn-nogit-'), 'README.md')).toBeNull();
  });

  it('runs no fsmonitor the repository names while it lists what is tracked, and sees the index change', () => {
    const dir = repo();
    const fsmonitor = marker('fsmonitor');
    git(dir, 'config', 'core.fsmonitor', fsmonitor.program);
    expect(blobIdOf(dir, 'README.md')).not.toBeNull();
    expect(blobIdOf(dir, 'new.txt')).toBeNull();
    writeFileSync(join(dir, 'new.txt'), 'later\n');
    execFileSync('git', ['-c', 'core.fsmonitor=false', 'add', 'new.txt'], { cwd: dir });
    expect(blobIdOf(dir, 'new.txt')).toBe(git(dir, '-c', 'core.fsmonitor=false', 'hash-object', 'new.txt'));
    expect(fsmonitor.ran()).toBe(false);
  });
});

describe('git, as the client runs it', () => {
  it('lists only regular tracked files: no links, no submodules', () => {
    const dir = repo();
    symlinkSync('README.md', join(dir, 'alias.md'));
    const lib = repo();
    git(dir, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'lib');
    git(dir, 'add', '.');
    git(dir, 'commit', '-q', '-m', 'two');
    expect(trackedFiles(findRepo(dir)!, process.env)?.sort()).toEqual(['.gitmodules', 'README.md', 'src/a.ts']);
  });

  it('ignores a GIT_DIR or GIT_INDEX_FILE the caller carries (a git hook’s) and drops every GIT_* but the global config', () => {
    const dir = repo();
    const other = repo();
    const env = {
      ...process.env,
      GIT_DIR: join(other, '.git'),
      GIT_INDEX_FILE: '/nonexistent',
      GIT_CONFIG_GLOBAL: '/x',
    };
    expect(gitEnv(env)).toMatchObject({ GIT_CONFIG_GLOBAL: '/x', GIT_CONFIG_NOSYSTEM: '1', GIT_OPTIONAL_LOCKS: '0' });
    expect(gitEnv(env).GIT_DIR).toBeUndefined();
    const out = runGit(findRepo(dir)!, {
      args: ['rev-parse', '--absolute-git-dir'],
      env,
      timeoutMs: 5_000,
      maxBytes: 4096,
    });
    expect(out?.trim()).toBe(join(dir, '.git'));
  });

  it.skipIf(process.getuid?.() !== 0)(
    'gives no history in a checkout of another account, keeping its branch and HEAD',
    async () => {
      const dir = repo();
      const head = git(dir, 'rev-parse', 'HEAD');
      execFileSync('chown', ['-R', '65534:65534', dir]);
      const home = tempDir('cairn-home-');
      const view = await readGitView(dir, 5_000, { ...process.env, HOME: home });
      expect(view?.head).toBe(head);
      expect(view?.history).toEqual([]);
      writeFileSync(join(home, '.gitconfig'), `[safe]\n  directory = *\n`);
      expect((await readGitView(dir, 5_000, { ...process.env, HOME: home }))?.history).toEqual([head.slice(0, 12)]);
    },
  );
});

describe('locating a repository', () => {
  it('refuses a .git file aiming at a worktree folder that names another checkout', () => {
    const main = repo();
    const wt = join(tempDir('cairn-wt-'), 'feature');
    git(main, 'worktree', 'add', '-q', wt);
    expect(findRepo(wt)?.root).toBe(wt);
    // A copy of the worktree's .git file elsewhere: the worktree folder names `wt`, not this one.
    const copy = tempDir('cairn-copy-');
    writeFileSync(join(copy, '.git'), `gitdir: ${join(main, '.git', 'worktrees', 'feature')}\n`);
    expect(locateRepo(copy)).toMatchObject({ refused: expect.stringContaining('outside the checkout') });
    expect(findRepo(copy)).toBeNull();
  });

  it('reads git files only as regular files: a HEAD that links to a secret gives no commit', async () => {
    const dir = repo();
    const secret = join(tempDir('cairn-out-'), 'token');
    writeFileSync(secret, `${'ab'.repeat(20)}\n`);
    renameSync(join(dir, '.git', 'HEAD'), join(dir, '.git', 'HEAD.old'));
    symlinkSync(secret, join(dir, '.git', 'HEAD'));
    expect(await readGitView(dir, 0)).toBeNull();
  });
});

describe('git config text', () => {
  it('reads sections, subsections, quotes and comments as git does, and no include', () => {
    const text =
      '[core]\n\tworktree = "../a b" # comment\n[remote "origin"]\n  url = git@x:y.git\n[include]\n  path = /etc/passwd\n[safe] directory = /r\n';
    expect(configValues(text, 'core', 'worktree')).toEqual(['../a b']);
    expect(configValues(text, 'remote', 'url', 'origin')).toEqual(['git@x:y.git']);
    expect(configValues(text, 'safe', 'directory')).toEqual(['/r']);
    expect(configValues(text, 'core', 'url')).toEqual([]);
  });
});
