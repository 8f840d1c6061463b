// `cairn prime` in a hostile repository, made here with real git: what a clone can aim at the client must not
// reach team memory. Of a repository the client reads only what git tracks, as regular files inside the checkout.
import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
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
});
