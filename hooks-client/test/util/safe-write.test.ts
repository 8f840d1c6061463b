// A hostile repository (or another program) puts links where cairn writes: install and uninstall never write
// or read through them, never loosen a file's mode, and keep cairn's own folders and files owner-only.
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pathsFor } from '../../src/config';
import { run } from '../../src/run';
import { updateState } from '../../src/state';
import { ensurePrivateDir, safeReadFile, safeUnlink, safeWriteFile, UnsafePathError } from '../../src/util/safe-write';
import { machine, memIo, tempDir } from '../support';

const modeOf = (p: string) => statSync(p).mode & 0o777;
const BASHRC = '# the user\'s own shell start-up\nexport PATH="$HOME/bin:$PATH"\nalias ll="ls -l"\n';

/** A machine with a ~/.bashrc, a 0600 ~/.claude.json holding an API key, and a cloned repository. */
function setup() {
  const { home, env } = machine('https://cairn.example.dev');
  env.PATH = tempDir('cairn-path-'); // no `claude` CLI: install edits the files itself
  const bashrc = join(home, '.bashrc');
  writeFileSync(bashrc, BASHRC);
  chmodSync(bashrc, 0o644);
  const claudeJson = join(home, '.claude.json');
  writeFileSync(claudeJson, '{"primaryApiKey": "sk-ant-secret", "numStartups": 3}\n');
  chmodSync(claudeJson, 0o600);
  mkdirSync(join(home, '.claude'), { recursive: true });
  const settings = join(home, '.claude', 'settings.json');
  writeFileSync(settings, '{"model": "opus"}\n');
  chmodSync(settings, 0o600);
  const repo = tempDir('cairn-repo-');
  mkdirSync(join(repo, '.claude'));
  return { home, env, bashrc, claudeJson, settings, repo };
}

const cli = (env: Record<string, string | undefined>, cwd: string, ...args: string[]) => {
  const io = memIo({ env, cwd });
  return run(args, io).then((code) => ({ code, io }));
};

describe('install and uninstall in a repository that ships a link where the backup goes', () => {
  it('leave ~/.bashrc byte for byte and say which path they refused', async () => {
    const { env, bashrc, repo } = setup();
    const local = join(repo, '.claude', 'settings.local.json');
    writeFileSync(local, '{"env": {"FROM_REPO": "1"}}\n');
    symlinkSync(bashrc, `${local}.cairn-backup`);

    const installed = await cli(env, repo, 'install', '--project', '--client', '/opt/cairn/cairn.cjs');
    expect(installed.code).toBe(1);
    expect(installed.io.stderr).toContain('settings.local.json.cairn-backup is a symbolic link');
    expect(readFileSync(bashrc, 'utf8')).toBe(BASHRC);
    expect(modeOf(bashrc)).toBe(0o644);
    // Nothing was changed: the repository's file is as it shipped.
    expect(readFileSync(local, 'utf8')).toBe('{"env": {"FROM_REPO": "1"}}\n');

    const removed = await cli(env, repo, 'uninstall', '--project');
    expect(removed.code).toBe(0);
    expect(readFileSync(bashrc, 'utf8')).toBe(BASHRC);
    expect(lstatSync(`${local}.cairn-backup`).isSymbolicLink()).toBe(true);
  });

  it('refuse a settings file that is a link, and a .claude folder that is a link, without reading through them', async () => {
    const { env, home, claudeJson, repo } = setup();
    const local = join(repo, '.claude', 'settings.local.json');
    symlinkSync(claudeJson, local); // valid JSON holding a key: it must not be copied into the repository
    const before = readFileSync(claudeJson, 'utf8');
    const a = await cli(env, repo, 'install', '--project', '--no-mcp', '--client', '/opt/cairn/cairn.cjs');
    expect(a.code).toBe(1);
    expect(a.io.stderr).toContain('is a symbolic link');
    expect(readFileSync(claudeJson, 'utf8')).toBe(before);
    expect(lstatSync(local).isSymbolicLink()).toBe(true);

    const other = tempDir('cairn-repo-');
    symlinkSync(join(home, '.claude'), join(other, '.claude'));
    const b = await cli(env, other, 'install', '--project', '--no-mcp', '--client', '/opt/cairn/cairn.cjs');
    expect(b.code).toBe(1);
    expect(b.io.stderr).toContain(`${join(other, '.claude')} is a symbolic link`);
    expect(existsSync(join(home, '.claude', 'settings.local.json'))).toBe(false);
  });
});

describe('modes after install and uninstall', () => {
  it("keep 0600 files 0600, make backups 0600 and cairn's folders 0700", async () => {
    const { env, claudeJson, settings, home } = setup();
    const paths = pathsFor(env);
    const installed = await cli(env, home, 'install', '--client', '/opt/cairn/cairn.cjs');
    expect(installed.code, installed.io.stderr).toBe(0);
    expect(readFileSync(claudeJson, 'utf8')).toContain('cairn');
    expect(modeOf(claudeJson)).toBe(0o600);
    expect(modeOf(settings)).toBe(0o600);
    expect(modeOf(`${settings}.cairn-backup`)).toBe(0o600);
    expect(modeOf(`${claudeJson}.cairn-backup`)).toBe(0o600);
    expect(modeOf(paths.configDir)).toBe(0o700);
    expect(modeOf(join(paths.configDir, 'install.json'))).toBe(0o600);

    const removed = await cli(env, home, 'uninstall');
    expect(removed.code, removed.io.stderr).toBe(0);
    expect(readFileSync(claudeJson, 'utf8')).toBe('{"primaryApiKey": "sk-ant-secret", "numStartups": 3}\n');
    expect(modeOf(claudeJson)).toBe(0o600);
    expect(modeOf(settings)).toBe(0o600);
    expect(existsSync(`${settings}.cairn-backup`)).toBe(false);
  });

  it("keeps a 0644 file 0644 while it holds no secret, and makes it 0600 once it holds the sender's", async () => {
    const { env, settings, home } = setup();
    chmodSync(settings, 0o644);
    expect(
      (await cli({ ...env, CAIRN_SENDER: 'off' }, home, 'install', '--no-mcp', '--client', '/opt/cairn/cairn.cjs'))
        .code,
    ).toBe(0);
    expect(modeOf(settings)).toBe(0o644);
    expect((await cli(env, home, 'install', '--no-mcp', '--client', '/opt/cairn/cairn.cjs')).code).toBe(0);
    expect(modeOf(settings)).toBe(0o600);
    expect(modeOf(`${settings}.cairn-backup`)).toBe(0o600);
  });

  it('makes the state folder 0700 and its files 0600, narrowing a folder an earlier version made 0755', () => {
    const { env } = machine(null);
    const { stateDir } = pathsFor(env);
    mkdirSync(stateDir, { recursive: true, mode: 0o755 });
    chmodSync(stateDir, 0o755);
    updateState(stateDir, { lastDeliveredAt: 1 });
    expect(modeOf(stateDir)).toBe(0o700);
    expect(modeOf(join(stateDir, 'state.json'))).toBe(0o600);
    const fresh = pathsFor(machine(null).env).stateDir;
    updateState(fresh, { lastDeliveredAt: 2 });
    expect(modeOf(fresh)).toBe(0o700);
  });
});

describe('safeWriteFile', () => {
  it('replaces a file through a rename, keeping its mode, and refuses links, folders and paths outside its root', () => {
    const dir = tempDir('cairn-safe-');
    const target = join(dir, 'victim');
    writeFileSync(target, 'keep me');
    const f = join(dir, 'a.json');
    writeFileSync(f, 'old');
    chmodSync(f, 0o640);
    const inode = statSync(f).ino;
    safeWriteFile(f, 'new');
    expect(readFileSync(f, 'utf8')).toBe('new');
    expect(modeOf(f)).toBe(0o640);
    expect(statSync(f).ino).not.toBe(inode); // a new file renamed in, not the old one written through

    const link = join(dir, 'link');
    symlinkSync(target, link);
    expect(() => safeWriteFile(link, 'x')).toThrow(UnsafePathError);
    expect(() => safeReadFile(link)).toThrow(UnsafePathError);
    expect(() => safeUnlink(link)).toThrow(UnsafePathError);
    expect(readFileSync(target, 'utf8')).toBe('keep me');

    expect(() => safeWriteFile(join(dir, '..', 'escaped'), 'x', { root: dir })).toThrow(/is outside/);
    const linkedDir = join(dir, 'sub');
    symlinkSync(tempDir('cairn-elsewhere-'), linkedDir);
    expect(() => safeWriteFile(join(linkedDir, 'f'), 'x', { root: dir })).toThrow(/sub is a symbolic link/);
    mkdirSync(join(dir, 'folder'));
    expect(() => safeWriteFile(join(dir, 'folder'), 'x')).toThrow(/not a regular file/);
  });

  it('creates missing folders 0700 and new files 0600 whatever the umask', () => {
    const root = tempDir('cairn-safe-');
    const old = process.umask(0o000);
    try {
      safeWriteFile(join(root, 'a', 'b', 'c.json'), '{}', { root });
      ensurePrivateDir(join(root, 'd', 'e'));
    } finally {
      process.umask(old);
    }
    expect(modeOf(join(root, 'a'))).toBe(0o700);
    expect(modeOf(join(root, 'a', 'b'))).toBe(0o700);
    expect(modeOf(join(root, 'a', 'b', 'c.json'))).toBe(0o600);
    expect(modeOf(join(root, 'd', 'e'))).toBe(0o700);
  });
});
