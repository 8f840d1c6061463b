// `cairn prime` in a hostile repository, made here with real git: what a clone can aim at the client must not
// reach team memory. Of a repository the client reads only what git tracks, as regular files inside the checkout.
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from '../../src/run';
import { machine, memIo, tempDir } from '../support';

/** The victim's private file: what a committed link would put into team memory. */
const PRIVATE = 'Host bastion.internal\n  User deploy\n# TODO: rotate deploy password hunter2\n';

const gitIn =
  (dir: string) =>
  (...args: string[]) =>
    execFileSync(
      'git',
      ['-c', 'user.name=Mallory', '-c', 'user.email=m@example.com', '-c', 'commit.gpgsign=false', ...args],
      { cwd: dir, stdio: 'ignore' },
    );

/** A machine whose home holds ~/.ssh/config, and an empty repository beside it with one benign README. */
function victim() {
  const m = machine(null);
  mkdirSync(join(m.home, '.ssh'), { recursive: true });
  writeFileSync(join(m.home, '.ssh', 'config'), PRIVATE);
  const dir = join(tempDir('cairn-hostile-'), 'clone');
  mkdirSync(dir, { recursive: true });
  const g = gitIn(dir);
  g('init', '-q');
  g('remote', 'add', 'origin', 'git@github.com:mallory/clone.git');
  return { m, dir, g, secret: join(m.home, '.ssh', 'config') };
}

/** A program the repository names: it leaves `marker` behind if anything runs it. */
function trap(name: string): { path: string; marker: string } {
  const marker = join(tempDir('cairn-trap-'), `${name}.ran`);
  const path = join(tempDir('cairn-trap-'), name);
  writeFileSync(path, `#!/bin/sh\ntouch '${marker}'\nexit 1\n`);
  chmodSync(path, 0o755);
  return { path, marker };
}

/** A commit carrying a (bogus) PGP signature on top of HEAD: `git log --show-signature` hands it to gpg.program. */
function signedCommit(dir: string, subject: string): void {
  const out = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();
  const tree = out('rev-parse', 'HEAD^{tree}');
  const parent = out('rev-parse', 'HEAD');
  const body = `tree ${tree}\nparent ${parent}\nauthor M <m@example.com> 1700000000 +0000\ncommitter M <m@example.com> 1700000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\n${subject}\n`;
  const id = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], {
    cwd: dir,
    input: body,
    encoding: 'utf8',
  }).trim();
  out('update-ref', 'HEAD', id);
}

/** Another repository of the victim's, with a commit nobody else should see. */
function privateRepo(): string {
  const dir = join(tempDir('cairn-private-'), 'secret-plans');
  mkdirSync(dir, { recursive: true });
  const g = gitIn(dir);
  g('init', '-q');
  g('remote', 'add', 'origin', 'git@github.com:victim/secret-plans.git');
  writeFileSync(join(dir, 'README.md'), '# Secret plans\n\nAcquire the competitor.\n');
  g('add', '.');
  g('commit', '-q', '-m', 'Acquisition target list');
  return dir;
}

async function dryRun(cwd: string, env: Record<string, string | undefined>) {
  const io = memIo({ env, cwd });
  const code = await run(['prime', '--dry-run'], io);
  return { code, out: io.stdout, err: io.stderr };
}

describe('cairn prime in a hostile repository', () => {
  it('does not read through committed symlinks: a README, a doc and a scanned file that link to ~/.ssh/config give nothing of it', async () => {
    const { m, dir, g, secret } = victim();
    mkdirSync(join(dir, 'docs'));
    symlinkSync(secret, join(dir, 'README.md'));
    symlinkSync(secret, join(dir, 'docs', 'setup.md'));
    symlinkSync(secret, join(dir, 'notes.txt'));
    writeFileSync(join(dir, 'docs', 'guide.md'), '# Guide\n\nHow to use it.\n');
    writeFileSync(join(dir, 'main.c'), '// TODO: handle errors\nint main(void) { return 0; }\n');
    g('add', '.');
    g('commit', '-q', '-m', 'Add docs');
    const r = await dryRun(dir, m.env);
    expect(r.code, r.err).toBe(0);
    expect(r.out).not.toMatch(/bastion|rotate deploy|hunter2/);
    // The regular files beside the links are still read.
    expect(r.out).toContain('[docs] docs/guide.md: Guide');
    expect(r.out).toContain('[todo] Open TODOs in main.c (1)');
  });

  it('does not read a tracked path whose folder in the checkout is a link out of it', async () => {
    const { m, dir, g, secret } = victim();
    mkdirSync(join(dir, 'docs'));
    writeFileSync(join(dir, 'docs', 'config'), '# Harmless\n');
    writeFileSync(join(dir, 'README.md'), '# Clone\n\nA tool.\n');
    g('add', '.');
    g('commit', '-q', '-m', 'Start');
    // The index still names docs/config; the checkout's docs/ is now a link to ~/.ssh (an archive can ship this).
    renameSync(join(dir, 'docs'), join(dir, 'docs.old'));
    symlinkSync(join(secret, '..'), join(dir, 'docs'));
    const r = await dryRun(dir, m.env);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('[docs] README.md: Clone');
    expect(r.out).not.toMatch(/bastion|rotate deploy|hunter2/);
  });

  it('outside git reads the folder’s README only when it is a regular file', async () => {
    const { m, secret } = victim();
    const plain = tempDir('cairn-plain-');
    symlinkSync(secret, join(plain, 'README.md'));
    const r = await dryRun(plain, m.env);
    expect(r.code, r.err).toBe(0);
    expect(r.out).not.toMatch(/bastion|rotate deploy|hunter2/);
  });

  it('runs no program the repository’s .git/config names: core.fsmonitor, gpg.program with log.showSignature', async () => {
    const { m, dir, g } = victim();
    writeFileSync(join(dir, 'README.md'), '# Clone\n\nA tool.\n');
    g('add', '.');
    g('commit', '-q', '-m', 'Start');
    signedCommit(dir, 'A signed change');
    const fsmonitor = trap('fsmonitor');
    const gpg = trap('gpg');
    g('config', 'core.fsmonitor', fsmonitor.path);
    g('config', 'log.showSignature', 'true');
    g('config', 'gpg.program', gpg.path);
    g('config', 'core.pager', trap('pager').path);
    const r = await dryRun(dir, m.env);
    expect(r.code, r.err).toBe(0);
    // What prime is for still works: the docs outline and both commits.
    expect(r.out).toContain('[docs] README.md: Clone');
    expect(r.out).toContain('[commit] A signed change');
    expect(r.out).toContain('[commit] Start');
    expect({ fsmonitor: existsSync(fsmonitor.marker), gpg: existsSync(gpg.marker) }, 'programs that ran').toEqual({
      fsmonitor: false,
      gpg: false,
    });
  });

  it('runs no `git` the checkout ships, even with `.` on PATH', async () => {
    const { m, dir, g } = victim();
    const marker = join(tempDir('cairn-trap-'), 'git.ran');
    writeFileSync(join(dir, 'git'), `#!/bin/sh\ntouch '${marker}'\n`);
    chmodSync(join(dir, 'git'), 0o755);
    writeFileSync(join(dir, 'README.md'), '# Clone\n');
    g('add', '.');
    g('commit', '-q', '-m', 'Start');
    // Both the client's environment and the process's: either may be where git is looked up.
    const path = process.env.PATH;
    process.env.PATH = `.:${path}`;
    let r: Awaited<ReturnType<typeof dryRun>>;
    try {
      r = await dryRun(dir, { ...m.env, PATH: process.env.PATH });
    } finally {
      process.env.PATH = path;
    }
    expect(r.code, r.err).toBe(0);
    expect(existsSync(marker), "the checkout's ./git ran").toBe(false);
    expect(r.out).toContain('[commit] Start');
  });

  it('refuses a .git file, a .git link or a commondir that leads to another repository, and reads nothing of it', async () => {
    const secret = privateRepo();
    const cases: Array<[string, (dir: string) => void]> = [
      ['a .git file', (dir) => writeFileSync(join(dir, '.git'), `gitdir: ${join(secret, '.git')}\n`)],
      ['a .git link', (dir) => symlinkSync(join(secret, '.git'), join(dir, '.git'))],
      [
        'a commondir',
        (dir) => {
          mkdirSync(join(dir, '.git'));
          writeFileSync(join(dir, '.git', 'HEAD'), 'ref: refs/heads/main\n');
          writeFileSync(join(dir, '.git', 'commondir'), `${join(secret, '.git')}\n`);
        },
      ],
    ];
    for (const [what, make] of cases) {
      const m = machine(null);
      const dir = tempDir('cairn-archive-');
      writeFileSync(join(dir, 'README.md'), '# Innocent\n');
      make(dir);
      const r = await dryRun(dir, m.env);
      expect(r.code, what).toBe(1);
      expect(r.err, what).toContain('is not read');
      expect(r.out + r.err, what).not.toMatch(/Acquisition|Acquire/);
      // Nor does any hook take the other repository's name for this folder.
      const status = memIo({ env: m.env, cwd: dir });
      await run(['status'], status);
      expect(status.stdout, what).not.toContain('victim/secret-plans');
    }
  });

  it('still reads a linked worktree and a submodule: git names them back', async () => {
    const { m, dir, g } = victim();
    writeFileSync(join(dir, 'README.md'), '# Clone\n');
    g('add', '.');
    g('commit', '-q', '-m', 'Start');
    const wt = join(tempDir('cairn-wt-'), 'feature');
    g('worktree', 'add', '-q', wt);
    const inWt = await dryRun(wt, m.env);
    expect(inWt.code, inWt.err).toBe(0);
    expect(inWt.out).toContain('[commit] Start');
    const lib = privateRepo();
    g('-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'lib');
    const inSub = await dryRun(join(dir, 'lib'), m.env);
    expect(inSub.code, inSub.err).toBe(0);
    expect(inSub.out).toContain('[commit] Acquisition target list');
  });

  it.skipIf(process.getuid?.() !== 0)(
    'does not read a checkout that belongs to another account, unless the user’s git config lists it in safe.directory',
    async () => {
      const { m, dir, g } = victim();
      writeFileSync(join(dir, 'README.md'), '# Theirs\n');
      g('add', '.');
      g('commit', '-q', '-m', 'Their commit');
      execFileSync('chown', ['-R', '65534:65534', dir]);
      const refused = await dryRun(dir, m.env);
      expect(refused.code).toBe(1);
      expect(refused.err).toContain('belongs to another account (uid 65534)');
      expect(refused.out).not.toContain('Their commit');
      writeFileSync(join(m.home, '.gitconfig'), `[safe]\n\tdirectory = ${dir}\n`);
      const listed = await dryRun(dir, m.env);
      expect(listed.code, listed.err).toBe(0);
      expect(listed.out).toContain('[commit] Their commit');
      chownSync(dir, 0, 0);
    },
  );

  it('redacts a secret in a file’s path wherever prime names the file: titles, texts and file lists', async () => {
    const { m, dir, g } = victim();
    const token = ['ghp_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'].join('');
    mkdirSync(join(dir, 'docs'));
    writeFileSync(join(dir, 'docs', `${token}.md`), '# Setup\n\nSteps.\n');
    writeFileSync(join(dir, `${token}.c`), '// TODO: remove this file\n');
    g('add', '.');
    g('commit', '-q', '-m', 'Add setup');
    const r = await dryRun(dir, m.env);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('[docs] docs/[REDACTED:github-token].md: Setup');
    expect(r.out).toContain('[todo] Open TODOs in [REDACTED:github-token].c (1)');
    expect(r.out).not.toContain(token);
    const { gatherNotes } = await import('../../src/commands/prime');
    const { openRepo } = await import('../../src/repo/tracked');
    const opened = openRepo(dir, m.env);
    const notes = gatherNotes(opened && 'repo' in opened ? opened : { root: dir }, m.env).notes;
    expect(JSON.stringify(notes)).not.toContain(token);
  });
});
