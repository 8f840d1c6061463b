// Project identity: one key for every clone and worktree of a repository, found without running git.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isPathExcluded } from '#shared/glob';
import { computeProjectKey, projectFor, projectKeyFor } from '../../src/project/project-key';
import { pathInsideRoot as relativeToRoot } from '#shared/paths';
import { localKey, normaliseRemote } from '../../src/project/remote';
import { isTaskNotificationOnly, stripMemoryTags } from '#shared/tags';
import { tempDir } from '../support';
import { countScans } from '../../../test/support/scan-count';

describe('normaliseRemote', () => {
  it.each([
    ['git@github.com:Acme/Widgets.git', 'github.com/acme/widgets'],
    ['https://github.com/acme/widgets', 'github.com/acme/widgets'],
    ['https://github.com/acme/widgets.git/', 'github.com/acme/widgets'],
    ['https://user:pass@github.com/Acme/Widgets.git', 'github.com/acme/widgets'],
    ['ssh://git@github.com:22/acme/widgets.git', 'github.com/acme/widgets'],
    ['git://github.com/acme/widgets', 'github.com/acme/widgets'],
    ['git@gitlab.example.com:group/sub/project.git', 'gitlab.example.com/group/sub/project'],
    ['git@ssh.dev.azure.com:v3/org/proj/repo', 'dev.azure.com/org/proj/repo'],
    ['https://org@dev.azure.com/org/proj/_git/repo', 'dev.azure.com/org/proj/repo'],
  ])('%s → %s', (remote, key) => {
    expect(normaliseRemote(remote)).toBe(key);
  });

  it.each(['/srv/git/repo.git', 'file:///srv/git/repo.git', 'C:\\repos\\widgets', '', '../sibling'])(
    'has no key for the local remote %j',
    (remote) => {
      expect(normaliseRemote(remote)).toBeNull();
    },
  );

  it('names a folder without a remote local/<folder>, whatever the separators', () => {
    expect(localKey('/home/me/Scratch/')).toBe('local/scratch');
    expect(localKey('C:\\Users\\me\\Scratch')).toBe('local/scratch');
  });
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, stdio: 'pipe', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd } });

describe('project key from a checkout on disk', () => {
  it('gives an ssh clone, an https clone, a worktree and a subfolder the same key', () => {
    const root = tempDir();
    const ssh = join(root, 'laptop-widgets');
    const https = join(root, 'desktop', 'Widgets');
    for (const [dir, remote] of [
      [ssh, 'git@github.com:Acme/Widgets.git'],
      [https, 'https://github.com/acme/widgets'],
    ] as const) {
      mkdirSync(dir, { recursive: true });
      git(dir, 'init', '-q');
      git(dir, 'remote', 'add', 'origin', remote);
    }
    git(ssh, '-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-q', '--allow-empty', '-m', 'init');
    const worktree = join(root, 'wt-feature');
    git(ssh, 'worktree', 'add', '-q', worktree);
    mkdirSync(join(https, 'src', 'deep'), { recursive: true });
    const keys = [ssh, https, worktree, join(https, 'src', 'deep')].map((d) => computeProjectKey(d).key);
    expect(new Set(keys)).toEqual(new Set(['github.com/acme/widgets']));
  });

  it('uses the main checkout’s folder for a worktree of a repository without a remote', () => {
    const root = tempDir();
    const main = join(root, 'Notes');
    mkdirSync(main);
    git(main, 'init', '-q');
    git(main, '-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-q', '--allow-empty', '-m', 'init');
    git(main, 'worktree', 'add', '-q', join(root, 'notes-wip'));
    expect(computeProjectKey(join(root, 'notes-wip')).key).toBe('local/notes');
    expect(computeProjectKey(tempDir()).key).toMatch(/^local\/cairn-test-/);
  });

  it('finds the root of a checkout, a worktree and a subfolder (the folder paths are relative to)', () => {
    const root = tempDir();
    const main = join(root, 'widgets');
    mkdirSync(join(main, 'src', 'deep'), { recursive: true });
    git(main, 'init', '-q');
    git(main, '-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-q', '--allow-empty', '-m', 'init');
    const wt = join(root, 'widgets-feature');
    git(main, 'worktree', 'add', '-q', wt);
    mkdirSync(join(wt, 'lib'));
    expect(computeProjectKey(join(main, 'src', 'deep')).root).toBe(main);
    expect(computeProjectKey(join(wt, 'lib'))).toMatchObject({ key: 'local/widgets', root: wt });
    const plain = tempDir();
    expect(computeProjectKey(plain).root).toBe(plain);
  });

  it('recomputes a cache entry written before roots were cached', () => {
    const dir = tempDir();
    const state = tempDir();
    git(dir, 'init', '-q');
    writeFileSync(
      join(state, 'projects.json'),
      JSON.stringify({ [join(dir, 'sub')]: { key: 'local/old', configPath: null, mtimeMs: null, checkedAt: 1 } }),
    );
    mkdirSync(join(dir, 'sub'));
    expect(projectFor(join(dir, 'sub'), state, 2)).toEqual({
      key: expect.stringMatching(/^local\/cairn-test-/),
      root: dir,
    });
    expect(JSON.parse(readFileSync(join(state, 'projects.json'), 'utf8'))[join(dir, 'sub')].root).toBe(dir);
  });

  it('caches the key per cwd and notices a changed remote', () => {
    const dir = tempDir();
    const state = tempDir();
    git(dir, 'init', '-q');
    git(dir, 'remote', 'add', 'origin', 'git@github.com:acme/one.git');
    expect(projectKeyFor(dir, state, 1)).toBe('github.com/acme/one');
    // Rewrite the config with a new remote and a different mtime: the cache must not answer the old key.
    const config = join(dir, '.git', 'config');
    writeFileSync(config, '[remote "origin"]\n\turl = https://github.com/acme/two\n');
    execFileSync('touch', ['-d', '2001-01-01', config]);
    expect(projectKeyFor(dir, state, 2)).toBe('github.com/acme/two');
  });
});

describe('relativeToRoot', () => {
  it.each([
    ['/home/bob/code/widgets', '/home/bob/code/widgets/src/app.ts', 'src/app.ts'],
    ['/Users/alice/widgets/', '/Users/alice/widgets/src/app.ts', 'src/app.ts'],
    ['C:\\Users\\al\\Widgets', 'c:\\users\\al\\widgets\\src\\App.ts', 'src/App.ts'],
    ['/home/bob/widgets', '/home/bob/widgets-old/src/app.ts', null],
    ['/home/bob/widgets', '/home/bob/widgets', null],
    ['/home/bob/widgets', '/home/bob/widgets/../secrets.txt', null],
    ['', '/x/y', null],
  ])('%s + %s → %s', (root, file, rel) => {
    expect(relativeToRoot(root, file)).toBe(rel);
  });
});

describe('excluded-project globs', () => {
  const home = '/home/dev';
  it.each([
    ['/tmp/secret', '/tmp/secret', true],
    ['/tmp/public', '/tmp/secret', false],
    ['/tmp/anything', '/tmp/*', true],
    ['/tmp/a/b', '/tmp/*', false],
    ['/Users/test/kunden/client1/project', '/Users/*/kunden/**', true],
    ['/tmp/a', '/tmp/?', true],
    ['/tmp/ab', '/tmp/?', false],
    ['/home/dev/secret', '~/secret', true],
    ['/home/dev/projects/secret', '~/projects/*', true],
    ['/home/user/tmp', '/tmp/*,/var/tmp/*', false],
    ['C:\\Users\\test\\secret', 'C:/Users/*/secret', true],
    ['/work/clients/acme', 'acme', true],
    ['', '/tmp/*', false],
    ['/home/dev/secret/', '~/secret/', true],
    ['/home/devsecret', '~secret', false],
  ])('%s against %s → %s', (path, globs, expected) => {
    expect(isPathExcluded(path, globs.split(','), home)).toBe(expected);
  });
});

describe('memory tags', () => {
  it.each([
    ['public content <private>secret stuff</private> more public', 'public content  more public'],
    ['<private>secret</private> public <cairn-context>context</cairn-context> end', 'public  end'],
    ['public <persisted-output>large output</persisted-output> after', 'public  after'],
    ['<private>entire prompt is private</private>', ''],
    ['line1\n<private>secret</private>\nline2', 'line1\n\nline2'],
    [
      'user content <system_instruction>x</system_instruction> more <system-instruction>y</system-instruction> end',
      'user content  more  end',
    ],
    [
      'before\n<system-reminder>\nContents of CLAUDE.md:\n<cairn-context>\n# Recent\n</cairn-context>\n</system-reminder>\nafter',
      'before\n\nafter',
    ],
    ['<private data-x="1">attrs</private> kept', 'kept'],
    ['no tags here at all', 'no tags here at all'],
    // The shared (server) rules: any letter case, and a longer tag name is not a memory tag.
    ['a <PRIVATE>shout</PRIVATE> b', 'a  b'],
    ['<private-notes>mine</private-notes> kept', '<private-notes>mine</private-notes> kept'],
  ])('strips %j', (input, output) => {
    expect(stripMemoryTags(input)).toBe(output);
  });

  it('strips 150 private blocks and a 10,000-char block in one pass', () => {
    const many = '<private>s</private> x '.repeat(150);
    const long = `<private>${'x'.repeat(10_000)}</private> keep this`;
    // Counted, not timed (test/support/scan-count.ts): a few characters examined per character of input.
    const { value, work } = countScans(() => [stripMemoryTags(many), stripMemoryTags(long)]);
    expect(value[0]).not.toContain('<private>');
    expect(value[1]).toBe('keep this');
    expect(work).toBeLessThanOrEqual(12 * (many.length + long.length));
  });

  it.each([
    ['<task-notification>agent done</task-notification>', true],
    ['  \n<task-notification data-id="42">\nmulti\nline\n</task-notification>\n', true],
    ['<task-notification></task-notification>', true],
    ['<task-notification>oops', false],
    ['hi <task-notification>x</task-notification> more', false],
    ['<task-notification>a</task-notification><task-notification>b</task-notification>', false],
    ['<private>x</private>', false],
    ['', false],
  ])('task-notification-only %j → %s', (prompt, expected) => {
    expect(isTaskNotificationOnly(prompt)).toBe(expected);
  });
});
