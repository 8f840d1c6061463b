// `cairn prime` against a real `wrangler dev` (the run's shared server): a git repository's docs outlines, recent
// commits and open TODOs become [primed] notes, read back through the API redacted and without file bodies;
// priming again stores nothing; --dry-run, a paused folder and an excluded project send nothing.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { mintDevToken } from '../../../scripts/dev-server.mjs';
import { freshTeam, SHARED_SERVER_HOOK_MS, sharedServer } from '../../../test/support/shared-server';
import { run } from '../../src/run';
import { machine, memIo, tempDir } from '../support';

// Built from parts, so no scanner takes this file for a leak.
const AWS = ['AKIA', 'Q3EGRQ7HXMZ4TN2K'].join('');
const GITHUB = ['ghp_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'].join('');
const BODY = 'body-text-never-sent';

let url = '';
let token = '';

beforeAll(async () => {
  const shared = await sharedServer();
  url = shared.url;
  token = await mintDevToken(url, shared.adminSecret, { team: freshTeam('prime'), user: 'ada', device: 'laptop' });
}, SHARED_SERVER_HOOK_MS);

/** A repository with a README, a doc, a secret-bearing .env, TODOs, and three commits (one subject with a key). */
function repo(name: string): { dir: string; key: string } {
  const dir = join(tempDir('cairn-prime-'), name);
  mkdirSync(join(dir, 'docs'), { recursive: true });
  mkdirSync(join(dir, 'src'), { recursive: true });
  const g = (...args: string[]) =>
    execFileSync(
      'git',
      ['-c', 'user.name=Ada', '-c', 'user.email=ada@example.com', '-c', 'commit.gpgsign=false', ...args],
      { cwd: dir, stdio: 'ignore' },
    );
  g('init', '-q');
  g('remote', 'add', 'origin', `git@github.com:acme/${name}.git`);
  writeFileSync(
    join(dir, 'README.md'),
    `# ${name}\n\nRoutes widget requests and caches answers.\n\n## Deploy with ${GITHUB}\n\n${BODY}\n\n## Usage\n`,
  );
  g('add', '.');
  g('commit', '-q', '-m', 'Start the widget router');
  writeFileSync(join(dir, 'docs', 'cache.md'), `# The cache\n\nHow answers are kept.\n\n## Eviction\n\n${BODY}\n`);
  writeFileSync(
    join(dir, 'src', 'cache.ts'),
    `export const cache = new Map();\n// TODO: evict ${name} entries by size\n// FIXME the TTL is ignored\n`,
  );
  g('add', '.');
  g('commit', '-q', '-m', 'Add the cache');
  writeFileSync(join(dir, '.env'), `# TODO rotate\nAWS_ACCESS_KEY_ID=${AWS}\n`);
  g('add', '.');
  g('commit', '-q', '-m', `Ship the env with ${AWS}`);
  return { dir, key: `github.com/acme/${name}` };
}

async function cairn(cwd: string, env: Record<string, string | undefined>, ...argv: string[]) {
  const io = memIo({ env, cwd });
  const code = await run(argv, io);
  return { code, out: io.stdout, err: io.stderr };
}

const api = async <T>(path: string): Promise<T> => {
  const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
};

async function primedRecords(key: string) {
  // A project nothing was stored for is not there (404, like one the caller may not see).
  const probe = await fetch(`${url}/api/viewer/feed?project=${encodeURIComponent(key)}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (probe.status === 404) return { sources: [], full: [] };
  const feed = await api<{ items: Array<{ kind: string; id: number; source?: string }> }>(
    `/api/viewer/feed?project=${encodeURIComponent(key)}&limit=100`,
  );
  const ids = feed.items.filter((i) => i.kind === 'observation').map((i) => i.id);
  const full = ids.length
    ? (
        await api<{
          observations: Array<{ id: number; title: string; narrative: string; source: string; filesRead: string[] }>;
        }>(`/api/observations?ids=${ids.join(',')}`)
      ).observations
    : [];
  return { sources: feed.items.map((i) => i.source), full };
}

describe('cairn prime', () => {
  it('stores the docs outlines, commits and TODO files as [primed] notes, redacted and without file bodies; priming again stores nothing', async () => {
    const r = repo(freshTeam('widgets'));
    const m = machine(url, token);
    const first = await cairn(r.dir, m.env, 'prime');
    expect(first.code, first.err).toBe(0);
    // README + docs/cache.md, 3 commits, src/cache.ts (the .env is never read).
    expect(first.out).toContain(`primed 6 notes from ${r.key} (2 docs outlines, 3 commits, 1 files with TODOs;`);
    expect(first.out).toContain('6 stored, 0 already in memory');

    const { sources, full } = await primedRecords(r.key);
    expect(sources).toEqual(Array(6).fill('prime'));
    const titles = full.map((o) => o.title).sort();
    expect(titles).toEqual(
      [
        'Add the cache',
        'Open TODOs in src/cache.ts (2)',
        'README.md: ' + r.key.split('/').pop(),
        'Ship the env with [REDACTED:aws-access-key]',
        'Start the widget router',
        'docs/cache.md: The cache',
      ].sort(),
    );
    const text = JSON.stringify(full);
    expect(text).not.toContain(AWS);
    expect(text).not.toContain(GITHUB);
    expect(text).toContain('Deploy with [REDACTED:github-token]');
    expect(text).not.toContain(BODY);
    expect(text).not.toContain('rotate');
    expect(full.find((o) => o.title === 'Add the cache')!.filesRead.sort()).toEqual(['docs/cache.md', 'src/cache.ts']);

    const index = await (
      await fetch(`${url}/api/context?project=${encodeURIComponent(r.key)}`, {
        headers: { authorization: `Bearer ${token}` },
      })
    ).text();
    expect(index.split('\n').filter((l) => l.includes('[primed]'))).toHaveLength(6);

    const again = await cairn(r.dir, m.env, 'prime');
    expect(again.code, again.err).toBe(0);
    expect(again.out).toContain('0 stored, 6 already in memory');
    expect((await primedRecords(r.key)).full).toHaveLength(6);
  });

  it('sends nothing with --dry-run, in a paused folder, or for an excluded project', async () => {
    const r = repo(freshTeam('gadgets'));
    const m = machine(url, token);
    const dry = await cairn(r.dir, m.env, 'prime', '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.out).toContain('would send 6 notes');
    expect(dry.out).toContain('[todo] Open TODOs in src/cache.ts (2)');
    expect(dry.out).not.toContain(GITHUB);

    expect((await cairn(r.dir, m.env, 'pause', '--folder', r.dir)).code).toBe(0);
    const paused = await cairn(join(r.dir, 'src'), m.env, 'prime');
    expect(paused.code).toBe(1);
    expect(paused.err).toContain('recording is paused for the folder');
    expect((await cairn(r.dir, m.env, 'resume', '--folder', r.dir)).code).toBe(0);

    const excluded = await cairn(r.dir, { ...m.env, CAIRN_EXCLUDE_PROJECTS: 'github.com/acme/gadgets*' }, 'prime');
    expect(excluded.code).toBe(1);
    expect(excluded.err).toContain('excluded from memory');
    expect((await primedRecords(r.key)).full).toEqual([]);
  });

  it('refuses arguments it does not know', async () => {
    const m = machine(url, token);
    expect((await cairn(m.home, m.env, 'prime', 'everything')).code).toBe(2);
  });
});
