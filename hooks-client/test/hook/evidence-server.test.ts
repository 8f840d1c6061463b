// Evidence on the real stack (issue 34): the hooks client in a real git repository made here, against `wrangler dev`
// (the run's shared server, heuristic observer): records made from its tool events are judged at each SessionStart
// against the checkout as it is then — changed at a later commit and current again at the old one, a renamed
// function named as gone, a deleted file's record out of the index (and `gone` in search and MCP), a whitespace-only
// formatter run leaving a record current, a reverted change marked, a branch deleted without merging marked.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { mintDevToken } from '../../../scripts/dev-server.mjs';
import { freshTeam, SHARED_SERVER_HOOK_MS, sharedServer } from '../../../test/support/shared-server';
import { run } from '../../src/run';
import { hookJson, machine, memIo, tempDir } from '../support';

let url = '';
let token = '';
let env: Record<string, string | undefined> = {};

beforeAll(async () => {
  const shared = await sharedServer();
  url = shared.url;
  token = await mintDevToken(url, shared.adminSecret, { team: freshTeam('evidence'), user: 'ada', device: 'laptop' });
  env = machine(url, token).env;
}, SHARED_SERVER_HOOK_MS);

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=a@b', '-c', 'user.name=a', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    stdio: 'pipe',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd },
  })
    .toString()
    .trim();

interface Repo {
  dir: string;
  key: string;
  session: string;
}

function repo(files: Record<string, string>): Repo {
  const name = freshTeam('widgets');
  const dir = join(tempDir('cairn-evs-'), name);
  mkdirSync(join(dir, 'src'), { recursive: true });
  git(dir, 'init', '-q');
  git(dir, 'remote', 'add', 'origin', `git@github.com:acme/${name}.git`);
  for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, path), text);
  git(dir, 'add', '.');
  git(dir, 'commit', '-q', '-m', 'base');
  return { dir, key: `github.com/acme/${name}`, session: freshTeam('s') };
}

async function hook(r: Repo, event: string, fields: Record<string, unknown>): Promise<string> {
  const io = memIo({ env, stdin: hookJson({ session_id: r.session, cwd: r.dir, ...fields }) });
  expect(await run(['hook', event], io)).toBe(0);
  return io.stdout;
}

const api = async <T>(path: string): Promise<T> => {
  const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
};

type Found = { results: { id: number; title: string; evidence?: { value: string } }[] };

/** The agent edits `path` to `text` (the heuristic observer records the edit); answers the record's id. */
async function edit(r: Repo, path: string, text: string): Promise<number> {
  writeFileSync(join(r.dir, path), text);
  const before = await api<Found>(`/api/search?project=${encodeURIComponent(r.key)}&file=${path}&limit=50`);
  await hook(r, 'user-prompt-submit', { prompt: `Change ${path}` });
  await hook(r, 'post-tool-use', {
    tool_name: 'Edit',
    tool_input: { file_path: join(r.dir, path), old_string: 'x', new_string: text },
    tool_response: 'ok',
    tool_use_id: freshTeam('tu'),
  });
  for (let i = 0; i < 300; i++) {
    const found = await api<Found>(`/api/search?project=${encodeURIComponent(r.key)}&file=${path}&limit=50`);
    const fresh = found.results.filter((x) => !before.results.some((b) => b.id === x.id));
    if (fresh.length) return fresh[0]!.id;
    await new Promise((w) => setTimeout(w, 100));
  }
  throw new Error(`no record of the edit of ${path}`);
}

/** The index SessionStart injects now. */
async function index(r: Repo): Promise<string> {
  const out = await hook(r, 'session-start', { source: 'startup', session_id: freshTeam('s') });
  return out
    ? (JSON.parse(out) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext
    : '';
}
const lineOf = (text: string, id: number) => text.split('\n').find((l) => l.startsWith(`${id} `)) ?? null;

const CONFIG_V1 = 'export function parseConfig(raw: string) {\n  return JSON.parse(raw);\n}\n';
const CONFIG_V2 = 'export function parseConfig(raw: string) {\n  return JSON.parse(raw || "{}");\n}\n';

describe('evidence on the real stack, in a real git repository', () => {
  it('calls a record changed at a later commit, says its renamed function is gone, and current again at its commit', {
    timeout: 120_000,
  }, async () => {
    const r = repo({ 'src/config.ts': CONFIG_V1 });
    const id = await edit(r, 'src/config.ts', CONFIG_V2);
    git(r.dir, 'commit', '-qam', 'default to an empty object');
    const recorded = git(r.dir, 'rev-parse', 'HEAD');
    expect(lineOf(await index(r), id)).toMatch(/^\d+ .*Edited config\.ts$/);

    writeFileSync(join(r.dir, 'src', 'config.ts'), CONFIG_V2.replace('parseConfig', 'loadSettings'));
    git(r.dir, 'commit', '-qam', 'rename parseConfig');
    expect(lineOf(await index(r), id)).toMatch(/\(code changed: parseConfig no longer in the code\)$/);

    git(r.dir, 'checkout', '-q', recorded);
    expect(lineOf(await index(r), id)).toMatch(/Edited config\.ts$/);
  });

  it('leaves a deleted file’s record out of the index, says gone in search and MCP, and keeps a reformatted file’s record current', {
    timeout: 120_000,
  }, async () => {
    const r = repo({ 'src/legacy.ts': 'export const legacyLoader = 1;\n', 'src/format.ts': 'export const a=1;\n' });
    const legacy = await edit(r, 'src/legacy.ts', 'export const legacyLoader = 2;\n');
    const format = await edit(r, 'src/format.ts', 'export const a=2;\n');
    git(r.dir, 'commit', '-qam', 'work');
    const first = await index(r);
    expect(lineOf(first, legacy)).not.toBeNull();
    expect(lineOf(first, format)).not.toBeNull();

    rmSync(join(r.dir, 'src', 'legacy.ts'));
    writeFileSync(join(r.dir, 'src', 'format.ts'), 'export  const  a = 2;\n\n');
    git(r.dir, 'commit', '-qam', 'drop the legacy loader, format');
    const text = await index(r);
    expect(lineOf(text, legacy)).toBeNull();
    // Whitespace only: what the note says still holds.
    expect(lineOf(text, format)).toMatch(/Edited format\.ts$/);

    const search = await api<Found>(`/api/search?q=edited&project=${encodeURIComponent(r.key)}`);
    expect(search.results.at(-1)).toMatchObject({ id: legacy, evidence: { value: 'gone' } });
    const mcp = new Client({ name: 'evidence-test', version: '0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    const full = (await mcp.callTool({
      name: 'get_observations',
      arguments: { ids: [legacy, format] },
    })) as unknown as {
      content: { text: string }[];
      structuredContent: { records: { ref: string; evidence: string }[] };
    };
    expect(full.structuredContent.records).toEqual([
      expect.objectContaining({ ref: `#${legacy}`, evidence: 'gone' }),
      expect.objectContaining({ ref: `#${format}`, evidence: 'current' }),
    ]);
    expect(full.content[0]!.text).toContain('Evidence: gone');
    await mcp.close();
  });

  it('marks a record whose commit was reverted', { timeout: 120_000 }, async () => {
    const r = repo({ 'src/retry.ts': 'export const retryDelay = 100;\n' });
    const id = await edit(r, 'src/retry.ts', 'export const retryDelay = 250;\n');
    git(r.dir, 'commit', '-qam', 'slower retries');
    expect(lineOf(await index(r), id)).toMatch(/Edited retry\.ts$/);
    git(r.dir, 'revert', '--no-edit', 'HEAD');
    expect(lineOf(await index(r), id)).toMatch(/\(code changed: its change was reverted\)$/);
  });

  it('marks a record of a branch deleted without merging, and only marks it ⎇ while the branch is there', {
    timeout: 120_000,
  }, async () => {
    const r = repo({ 'src/cache.ts': 'export const cache = new Map();\n' });
    git(r.dir, 'switch', '-q', '-c', 'spike/warm-cache');
    const id = await edit(r, 'src/warm.ts', 'export const warmCache = true;\n');
    git(r.dir, 'add', '.');
    git(r.dir, 'commit', '-qm', 'try a warm cache');
    // One more event after the commit, so cairn sees the branch's tip.
    await edit(r, 'src/cache.ts', 'export const cache = new Map<string, string>();\n');
    git(r.dir, 'commit', '-qam', 'typed cache');
    git(r.dir, 'switch', '-q', 'main');
    const unmerged = lineOf(await index(r), id);
    expect(unmerged).toMatch(/⎇spike\/warm-cache$/);
    expect(unmerged).not.toContain('code changed');
    git(r.dir, 'branch', '-q', '-D', 'spike/warm-cache');
    expect(lineOf(await index(r), id)).toMatch(/\(code changed: branch deleted unmerged\) ⎇spike\/warm-cache$/);
  });
});
