// `cairn import --claude-mem` on a database written by claude-mem's own code (its SessionStore, run under
// Bun, both pinned in scripts/tools/claude-mem), sent to a real `wrangler dev`, checked through the export.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { claudeMemTools } from '../../../scripts/tools.mjs';
// @ts-expect-error plain ESM script without types
import { mintDevToken } from '../../../scripts/dev-server.mjs';
import { freshTeam, SHARED_SERVER_HOOK_MS, sharedServer } from '../../../test/support/shared-server';
import { convert } from '../../src/claude-mem/convert';
import { readClaudeMem } from '../../src/claude-mem/read';
import { parseMaps } from '../../src/commands/import-claude-mem';
import { run } from '../../src/run';
import { machine, memIo, tempDir } from '../support';

// claude-mem and bun are not devDependencies: scripts/tools.mjs installs them (pinned) into .tools/claude-mem,
// and finds bun's binary in its platform package (bun's postinstall, which would move it, does not run).
const TOOLS = claudeMemTools() as { claudeMem: string; bun: string };
const BUN = TOOLS.bun;
const STORE = join(TOOLS.claudeMem, 'plugin', 'sqlite', 'SessionStore.js');
const CLAUDE_MEM_VERSION = (
  JSON.parse(readFileSync(join(TOOLS.claudeMem, 'package.json'), 'utf8')) as { version: string }
).version;
const MAP = ['--map', 'alpha=github.com/acme/alpha'];

let dev: { url: string } | null = null;
let token = '';
let db = '';
let T0 = 0;
const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

beforeAll(async () => {
  const home = tempDir('claude-mem-home-');
  db = join(home, 'claude-mem.db');
  const made = spawnSync(
    BUN,
    [fileURLToPath(new URL('../fixtures/claude-mem-history.cjs', import.meta.url)), STORE, db],
    {
      env: { PATH: process.env.PATH, HOME: home },
      encoding: 'utf8',
    },
  );
  if (made.status !== 0) throw new Error(`claude-mem fixture failed: ${made.stderr}`);
  T0 = (JSON.parse(made.stdout) as { T0: number }).T0;
  const shared = await sharedServer();
  dev = shared;
  token = await mintDevToken(shared.url, shared.adminSecret, { team: freshTeam('cm'), user: 'me', device: 'laptop' });
}, SHARED_SERVER_HOOK_MS);

const cairn = async (args: string[]) => {
  const io = memIo({ env: { ...machine(dev!.url, token).env, CAIRN_BUN: BUN } });
  const code = await run(args, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
};

async function exported(): Promise<Array<Record<string, unknown>>> {
  const res = await fetch(`${dev!.url}/api/admin/export`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return (await res.text())
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe(`cairn import --claude-mem (claude-mem ${CLAUDE_MEM_VERSION}'s own database, Bun)`, () => {
  it('reads maps as NAME=KEY and names a malformed one', () => {
    expect(parseMaps(['a=github.com/x/a', 'b c=k=v']).map).toEqual(
      new Map([
        ['a', 'github.com/x/a'],
        ['b c=k', 'v'],
      ]),
    );
    expect(parseMaps(['nokey']).bad).toBe('nokey');
    expect(parseMaps(['=k']).bad).toBe('=k');
  });

  it('turns every claude-mem row into a record with its time, type, files and platform', () => {
    const { records, unmapped, counts } = convert(
      readClaudeMem(db, { PATH: process.env.PATH, CAIRN_BUN: BUN }),
      new Map([['alpha', 'github.com/acme/alpha']]),
      'me',
    );
    expect(counts).toEqual({ sessions: 3, prompts: 3, observations: 5, summaries: 2, skipped: 0 });
    expect(unmapped).toEqual(['beta']);
    const sessions = records.filter((r) => r.kind === 'session');
    expect(sessions.map((s) => [s.platform, s.project])).toEqual([
      ['claude-code', 'github.com/acme/alpha'],
      ['codex', 'local/beta'],
      ['manual', 'github.com/acme/alpha'],
    ]);
    expect(records.find((r) => r.kind === 'project')).toEqual({
      kind: 'project',
      key: 'local/beta',
      visibility: 'private',
      owner: 'me',
      created_at: expect.any(Number),
    });
    const fix = records.find((r) => r.kind === 'observation' && r.title === 'Login redirect loop fixed');
    expect(fix).toMatchObject({
      type: 'bugfix',
      created_at: T0,
      prompt_number: 1,
      files_read: ['src/auth/login.ts'],
      files_modified: ['src/auth/redirect.ts'],
      concepts: ['how-it-works'],
      discovery_tokens: 120,
    });
  });

  it('imports into the team with times, types, files and platforms kept, unmapped names private, and says how to map them', async () => {
    const before = sha(db);
    const r = await cairn(['import', '--claude-mem', db, ...MAP]);
    expect(r.stderr).toContain('100% ');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/new .*3 sessions, 3 prompts, 5 observations, 2 summaries/);
    expect(r.stderr).toContain('alpha → github.com/acme/alpha');
    expect(r.stderr).toContain('beta → local/beta (private to you)');
    expect(r.stderr).toContain('--map beta=<project key>');
    expect(sha(db)).toBe(before);

    const all = await exported();
    const sessions = all.filter((x) => x.kind === 'session' && String(x.session_key).startsWith('claude-mem:'));
    expect(Object.fromEntries(sessions.map((s) => [s.session_key, [s.platform, s.project, s.user]]))).toEqual({
      'claude-mem:claude-code:cc-session-1': ['claude-code', 'github.com/acme/alpha', 'me'],
      // Stored as every folder without a remote is: under its owner's handle (src/db/write-policy.ts).
      'claude-mem:codex:cx-session-1': ['codex', 'local/me/beta', 'me'],
      'claude-mem:manual:manual-content-alpha': ['manual', 'github.com/acme/alpha', 'me'],
    });
    expect(all.find((x) => x.kind === 'project' && x.key === 'local/me/beta')).toMatchObject({
      visibility: 'private',
      owner: 'me',
    });
    const observations = all.filter((x) => x.kind === 'observation');
    expect(observations.map((o) => [o.title, o.type, o.created_at]).sort()).toEqual([
      ['Cache the dependency install', 'decision', T0 + 3_600_000],
      ['Deploys happen on Tuesdays', 'discovery', T0 + 7_200_000],
      ['Login redirect loop fixed', 'bugfix', T0],
      ['Regression test for the redirect', 'feature', T0 + 60_000],
      ['Session cookie is SameSite=Lax', 'discovery', T0],
    ]);
    expect(observations.find((o) => o.title === 'Login redirect loop fixed')).toMatchObject({
      files_read: ['src/auth/login.ts'],
      files_modified: ['src/auth/redirect.ts'],
    });
    expect(observations.find((o) => o.title === 'Deploys happen on Tuesdays')).toMatchObject({ source: 'remember' });
    expect(
      all
        .filter((x) => x.kind === 'prompt')
        .map((p) => p.text)
        .sort(),
    ).toEqual(['fix the login redirect', 'now add a test for it', 'why is the build slow']);
    expect(all.filter((x) => x.kind === 'summary').map((s) => [s.created_at, s.request])).toEqual([
      [T0, 'fix the login redirect'],
      [T0 + 90_000, 'add a test'],
    ]);
  });

  it('adds nothing the second time', async () => {
    const before = (await exported()).length;
    const r = await cairn(['import', '--claude-mem', db, ...MAP]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/new 0 users, 0 projects, 0 sessions, 0 prompts, 0 observations, 0 summaries/);
    expect((await exported()).length).toBe(before);
  });

  it('says what it needs when neither node:sqlite nor Bun is there, and names a missing file', async () => {
    const missing = await cairn(['import', '--claude-mem', join(tempDir(), 'nope.db')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no claude-mem database at');
    const hasNodeSqlite = Boolean(
      (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule?.('node:sqlite'),
    );
    if (hasNodeSqlite) return;
    const io = memIo({ env: { ...machine(dev!.url, token).env, CAIRN_BUN: join(tempDir(), 'no-bun-here') } });
    expect(await run(['import', '--claude-mem', db], io)).toBe(1);
    expect(io.stderr).toContain('needs Node ≥ 22.5 (node:sqlite) or Bun');
  });
});
