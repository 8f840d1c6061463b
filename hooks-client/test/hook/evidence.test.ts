// The client's evidence (issue 34) in a real git repository: tool events carry the ids of the files they read or
// changed (git's own blob id, computed in process; the index's id before a change), never content, nothing for
// files outside the checkout, sensitive files or symlinks; SessionStart reports the watched files' state whole,
// then only a digest while nothing changed, then the changes; the index reader handles index versions 2 and 4.
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { branchKey, evidenceKey, fileEntry, fileKey } from '#shared/evidence';
import type { WireContextAnswer, WireContextRequest, WireWatch } from '#shared/wire/checkout';
import { checkoutOf, readFileIds } from '../../src/hook/evidence';
import { indexBlobs } from '../../src/repo/index-file';
import { findRepo } from '../../src/repo/locate';
import { idsOfBytes } from '../../src/repo/tracked';

const wsIdOfBytes = (b: Uint8Array) => idsOfBytes(b).ws;
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
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=a@b', '-c', 'user.name=a', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    stdio: 'pipe',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd },
  })
    .toString()
    .trim();

function repo(): string {
  const dir = join(tempDir('cairn-ev-'), 'widgets');
  mkdirSync(join(dir, 'src'), { recursive: true });
  git(dir, 'init', '-q');
  writeFileSync(join(dir, 'src', 'config.ts'), 'export function parseConfig() {\n  return 1;\n}\n');
  writeFileSync(join(dir, 'src', 'util.ts'), 'export const retry = 2;\n');
  writeFileSync(join(dir, '.env'), 'SECRET=1\n');
  git(dir, 'add', 'src');
  git(dir, 'commit', '-q', '-m', 'base');
  return dir;
}

async function hook(event: string, fields: Record<string, unknown>, env = machine(server.url).env) {
  return run(['hook', event], memIo({ env, stdin: hookJson(fields) }));
}

const sentEvents = () =>
  server.requests
    .filter((q) => q.method === 'POST' && q.json && !q.path.startsWith('/api/context'))
    .flatMap((q) => (q.json!.events as Record<string, unknown>[] | undefined) ?? [q.json!]);

describe('file ids with tool events', () => {
  it('sends git’s blob id of a file read, and of a file changed with its index id before the change', async () => {
    const dir = repo();
    const before = git(dir, 'rev-parse', ':src/config.ts');
    writeFileSync(join(dir, 'src', 'config.ts'), 'export function loadSettings() {\n  return 1;\n}\n');
    await hook('post-tool-use', {
      cwd: dir,
      tool_name: 'Read',
      tool_input: { file_path: join(dir, 'src', 'util.ts') },
      tool_response: 'x',
      tool_use_id: 'r-1',
    });
    await hook('post-tool-use', {
      cwd: dir,
      tool_name: 'Edit',
      tool_input: { file_path: 'src/config.ts', old_string: 'parseConfig', new_string: 'loadSettings' },
      tool_response: 'ok',
      tool_use_id: 'e-1',
    });
    const [read, edit] = sentEvents();
    expect(read!.file_ids).toEqual([
      {
        path: 'src/util.ts',
        blob: git(dir, 'hash-object', 'src/util.ts'),
        ws: wsIdOfBytes(Buffer.from('export const retry = 2;\n')),
      },
    ]);
    expect(edit!.file_ids).toEqual([
      expect.objectContaining({ path: 'src/config.ts', blob: git(dir, 'hash-object', 'src/config.ts'), base: before }),
    ]);
    // Ids only: nothing of the file's text travels with them.
    expect(JSON.stringify(edit!.file_ids)).not.toContain('loadSettings');
  });

  it('sends a null blob for a file that is not there, and no base for a new one', async () => {
    const dir = repo();
    writeFileSync(join(dir, 'src', 'new.ts'), 'export {};\n');
    await hook('post-tool-use', {
      cwd: dir,
      tool_name: 'Write',
      tool_input: { file_path: join(dir, 'src', 'new.ts'), content: 'export {};\n' },
      tool_response: 'ok',
      tool_use_id: 'w-1',
    });
    await hook('post-tool-use', {
      cwd: dir,
      tool_name: 'Read',
      tool_input: { file_path: join(dir, 'src', 'missing.ts') },
      tool_response: 'no such file',
      tool_use_id: 'r-2',
    });
    const [write, read] = sentEvents();
    expect(write!.file_ids).toEqual([expect.objectContaining({ path: 'src/new.ts', base: null })]);
    expect(read!.file_ids).toEqual([{ path: 'src/missing.ts', blob: null }]);
  });

  it('sends no ids for a sensitive file, a symlink, a file outside the checkout, outside any repository, or with evidence off', async () => {
    const dir = repo();
    symlinkSync(join(dir, 'src', 'util.ts'), join(dir, 'src', 'link.ts'));
    const outside = tempDir('cairn-ev-out-');
    writeFileSync(join(outside, 'x.ts'), 'x\n');
    const read = (cwd: string, file_path: string, id: string, env = machine(server.url).env) =>
      hook(
        'post-tool-use',
        { cwd, tool_name: 'Read', tool_input: { file_path }, tool_response: 'x', tool_use_id: id },
        env,
      );
    await read(dir, join(dir, '.env'), 's-1');
    await read(dir, join(dir, 'src', 'link.ts'), 's-2');
    await read(dir, join(outside, 'x.ts'), 's-3');
    await read(outside, join(outside, 'x.ts'), 's-4');
    await read(dir, join(dir, 'src', 'util.ts'), 's-5', { ...machine(server.url).env, CAIRN_EVIDENCE: 'off' });
    const events = sentEvents();
    expect(events).toHaveLength(5);
    for (const e of events) expect(e).not.toHaveProperty('file_ids');
  });
});

describe('ids computed in process', () => {
  it('gives git’s blob id for empty, text and binary files, and equal whitespace ids for a reformatted file', () => {
    const dir = repo();
    const files: Record<string, Buffer> = {
      'empty.txt': Buffer.alloc(0),
      'text.ts': Buffer.from('const a = 1;\r\n'),
      'bin.dat': Buffer.from([0, 1, 2, 255, 10, 0]),
    };
    const checkout = checkoutOf(dir, process.env)!;
    for (const [name, bytes] of Object.entries(files)) {
      writeFileSync(join(dir, name), bytes);
      expect(readFileIds(checkout, name)?.blob).toBe(git(dir, 'hash-object', name));
      expect(idsOfBytes(bytes).blob).toBe(git(dir, 'hash-object', name));
    }
    expect(wsIdOfBytes(Buffer.from('f(a,b)\n'))).toBe(wsIdOfBytes(Buffer.from('f( a, b )\n\n')));
    expect(wsIdOfBytes(Buffer.from('f(a,b)'))).not.toBe(wsIdOfBytes(Buffer.from('f(a,c)')));
    expect(readFileIds(checkout, 'src/nothing-here.ts')).toBeNull();
    expect(readFileIds(checkout, 'src')).toBeUndefined();
  });

  it.each([2, 3, 4])('reads the blob ids of index version %i as git lists them', (version) => {
    const dir = repo();
    for (let i = 0; i < 40; i++) writeFileSync(join(dir, 'src', `f${String(i).padStart(2, '0')}.ts`), `${i}\n`);
    git(dir, 'add', '.');
    git(dir, 'update-index', `--index-version=${version}`);
    const listed = Object.fromEntries(
      git(dir, 'ls-files', '-s')
        .split('\n')
        .map((l) => {
          const [, , blob, , path] = /^(\d+) ([0-9a-f]+) (\d)\t(.+)$/.exec(l)!;
          return [path!, blob!];
        }),
    );
    const asked = ['src/config.ts', 'src/f07.ts', 'src/f39.ts', 'src/nope.ts'];
    const found = indexBlobs(findRepo(dir)!, asked)!;
    expect(Object.fromEntries(found)).toEqual({
      'src/config.ts': listed['src/config.ts'],
      'src/f07.ts': listed['src/f07.ts'],
      'src/f39.ts': listed['src/f39.ts'],
    });
  });
});

describe('the checkout report at SessionStart', () => {
  /** A fake server that answers POST /api/context with `watch`, acknowledging whatever it is sent. */
  function answering(watch: WireWatch, need = () => false) {
    const got: WireContextRequest[] = [];
    server.handler = (req, res) => {
      if (req.method !== 'POST' || req.path !== '/api/context') return false;
      const body = req.json as unknown as WireContextRequest;
      got.push(body);
      const needed = need();
      const watchDigest = 'a'.repeat(64);
      const answer: WireContextAnswer = {
        text: '<cairn-context>\nindex\n</cairn-context>',
        checkout: { digest: needed ? null : body.checkout!.digest, need: needed, unreported: 0 },
        watch: body.checkout?.watch === watchDigest ? null : watch,
        watch_digest: watchDigest,
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer));
      return true;
    };
    return got;
  }

  it('reports the watched files whole, then a bare digest, then only what changed', async () => {
    const dir = repo();
    const env = machine(server.url).env;
    const watch: WireWatch = {
      files: [
        { path: 'src/config.ts', names: ['parseConfig', 'validatePort'] },
        { path: 'src/gone.ts', names: [] },
      ],
      branches: [],
    };
    const got = answering(watch);
    await hook('session-start', { cwd: dir, source: 'startup' }, env); // learns the watch
    await hook('session-start', { cwd: dir, source: 'startup' }, env); // reports it whole
    const config = git(dir, 'hash-object', 'src/config.ts');
    expect(got[1]!.checkout!.set).toEqual({
      [fileKey('src/config.ts')]: fileEntry({
        blob: config,
        ws: wsIdOfBytes(Buffer.from('export function parseConfig() {\n  return 1;\n}\n')),
        missing: [evidenceKey('validatePort')],
      }),
      [fileKey('src/gone.ts')]: '-',
    });
    expect(got[1]!.git).toMatchObject({ branch: 'main', head: git(dir, 'rev-parse', 'HEAD') });
    await hook('session-start', { cwd: dir, source: 'startup' }, env);
    // A bare digest, and the digest of the watch it holds (the server then does not send the watch again).
    expect(got[2]!.checkout).toEqual({ digest: got[1]!.checkout!.digest, watch: 'a'.repeat(64) });
    writeFileSync(join(dir, 'src', 'config.ts'), 'export function loadSettings() {}\n');
    await hook('session-start', { cwd: dir, source: 'startup' }, env);
    const changed = got[3]!.checkout!;
    expect(changed.base).toBe(got[1]!.checkout!.digest);
    expect(Object.keys(changed.set!)).toEqual([fileKey('src/config.ts')]);
    expect(changed.set![fileKey('src/config.ts')]).toContain(
      `${evidenceKey('parseConfig')},${evidenceKey('validatePort')}`,
    );
    // Nothing of the files but ids and keys: no path, no name, no content.
    for (const b of got) expect(JSON.stringify(b.checkout)).not.toMatch(/config|parseConfig|loadSettings/);
  });

  it('sends the whole state again when the server asks for it', async () => {
    const dir = repo();
    const env = machine(server.url).env;
    let needs = 0;
    const got = answering({ files: [{ path: 'src/util.ts', names: [] }], branches: [] }, () => needs-- > 0);
    await hook('session-start', { cwd: dir, source: 'startup' }, env);
    await hook('session-start', { cwd: dir, source: 'startup' }, env);
    needs = 1;
    await hook('session-start', { cwd: dir, source: 'startup' }, env);
    expect(got.at(-2)!.checkout).toEqual({ digest: got[1]!.checkout!.digest, watch: 'a'.repeat(64) });
    expect(got.at(-1)!.checkout!.set).toEqual(got[1]!.checkout!.set);
  });

  it('says a watched branch it once had and no longer has was deleted, and one it never had is absent', async () => {
    const dir = repo();
    git(dir, 'branch', 'spike/cache');
    const env = machine(server.url).env;
    const got = answering({ files: [], branches: ['spike/cache', 'someone-else'] });
    await hook('session-start', { cwd: dir, source: 'startup' }, env);
    await hook('session-start', { cwd: dir, source: 'startup' }, env);
    expect(got[1]!.checkout!.set).toEqual({ [branchKey('spike/cache')]: '1', [branchKey('someone-else')]: '0' });
    git(dir, 'branch', '-D', 'spike/cache');
    await hook('session-start', { cwd: dir, source: 'startup' }, env);
    expect(got[2]!.checkout!.set).toEqual({ [branchKey('spike/cache')]: 'd' });
  });

  it('falls back to GET /api/context for a server without the report', async () => {
    const dir = repo();
    await hook('session-start', { cwd: dir, source: 'startup' });
    expect(server.requests.map((r) => `${r.method} ${r.path.split('?')[0]}`)).toEqual([
      'POST /api/context',
      'GET /api/context',
    ]);
  });

  it('sends the ids of a file before a Read, so its notes are judged against it', async () => {
    const dir = repo();
    writeFileSync(join(dir, 'src', 'big.ts'), 'export const x = 1;\n'.repeat(200));
    await hook('pre-tool-use', { cwd: dir, tool_name: 'Read', tool_input: { file_path: join(dir, 'src', 'big.ts') } });
    const q = new URL(server.requests.find((r) => r.path.startsWith('/api/context/file'))!.path, 'http://x')
      .searchParams;
    expect(q.get('blob')).toBe(git(dir, 'hash-object', 'src/big.ts'));
    expect(q.get('ws')).toMatch(/^[0-9a-f]{16}$/);
    unlinkSync(join(dir, 'src', 'big.ts'));
  });
});
