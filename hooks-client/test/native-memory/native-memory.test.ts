// Beside Claude Code's own memory (issue 36): `cairn install --native-memory keep|import|leave` with a fake HOME
// holding an auto-memory folder made as Claude Code 2.1.332 writes it (native-memory/format.ts says where in the
// CLI that format was read), against a fake cairn API that files a repeated note as the real one does.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { claudeProjectSlug, factLines, nativeFacts, normalizeFact } from '../../src/native-memory/format';
import { leaveOutKnown } from '../../src/native-memory/keep';
import { readNativeMemory } from '../../src/native-memory/read';
import { run } from '../../src/run';
import { withBacktrackBudget } from '../backtrack-budget';
import { fakeServer, hookJson, machine, memIo, tempDir, type FakeServer } from '../support';

const INDEX = [
  '- [Package manager is pnpm](feedback_pnpm.md) — never npm here',
  '- [Deploys](project_deploys.md) — staging first, then production on Tuesdays',
  '- [Team wiki](reference_wiki.md) — where the runbooks live',
  '',
].join('\n');

const PNPM = [
  '---',
  'name: use-pnpm',
  'description: Package manager for this repository is pnpm',
  'metadata:',
  '  type: feedback',
  '---',
  '',
  'Use pnpm, never npm, in this repository.',
  '**Why:** the lockfile is pnpm-lock.yaml and npm rewrites it.',
  '**How to apply:** run pnpm install and pnpm test.',
  '',
].join('\n');

const DEPLOYS = [
  '---',
  'name: deploys',
  'description: How deploys go',
  'metadata:',
  '  type: project',
  '---',
  '',
  'Deploys go to staging first; production only on Tuesdays.',
  '',
].join('\n');

const WIKI = [
  '---',
  'name: team-wiki',
  'description: Where the runbooks live',
  'metadata:',
  '  type: reference',
  '---',
  '',
  'The runbooks live in the ops wiki under Runbooks/Widgets.',
  '',
].join('\n');

/** The real server files a note once per person and content (title and text): the fake keeps that rule. */
let server: FakeServer;
const notes = new Map<string, Record<string, unknown>>();
beforeAll(async () => {
  server = await fakeServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  server.context = { index: '', file: '', prompt: '' };
  server.handler = (req, res) => {
    // Each test is its own person (its own token): the fake's context route answers them too.
    if (req.path.startsWith('/api/context?') || (req.path === '/api/context' && req.method === 'GET')) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(server.context.index);
      return true;
    }
    if (req.path !== '/api/memory/remember') return false;
    const b = req.json ?? {};
    const key = createHash('sha256')
      .update(JSON.stringify([req.headers.authorization, b.scope, b.project ?? null, b.title ?? null, b.text]))
      .digest('hex');
    const duplicate = notes.has(key);
    if (!duplicate) notes.set(key, b);
    res.writeHead(duplicate ? 200 : 201, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: notes.size, scope: b.scope, project: b.project ?? null, duplicate }));
    return true;
  };
});

/** A git checkout and a HOME whose Claude Code auto memory for it holds `files`. */
function setup(files: Record<string, string> = {}) {
  const m = machine(server.url, `tok-${Math.random().toString(36).slice(2)}`);
  m.env.CAIRN_SENDER = 'off';
  const repo = realpathSync(tempDir('cairn-native-'));
  execFileSync('git', ['init', '-q'], { cwd: repo });
  const dir = join(m.home, '.claude', 'projects', claudeProjectSlug(repo)!, 'memory');
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return { ...m, repo, dir };
}

async function cairn(env: Record<string, string | undefined>, cwd: string, ...argv: string[]) {
  const io = memIo({ env, cwd });
  const code = await run(argv, io);
  return { code, out: io.stdout, err: io.stderr };
}

const install = (s: ReturnType<typeof setup>, ...more: string[]) =>
  cairn(s.env, s.repo, 'install', '--no-mcp', ...more);

const remembered = () => server.requests.filter((r) => r.path === '/api/memory/remember').map((r) => r.json!);

describe("Claude Code's auto memory, as 2.1.332 writes it", () => {
  it('is found under the project slug and read as one fact a memory file, with its description and type', () => {
    const s = setup({ 'MEMORY.md': INDEX, 'feedback_pnpm.md': PNPM, 'project_deploys.md': DEPLOYS });
    expect(claudeProjectSlug('/home/ana/src/my.repo')).toBe('-home-ana-src-my-repo');
    const found = readNativeMemory(s.env, s.home, s.repo)!;
    expect(found.dir).toBe(s.dir);
    expect(found.refused).toEqual([]);
    expect(found.facts).toEqual([
      {
        file: 'feedback_pnpm.md',
        title: 'Package manager for this repository is pnpm',
        text: 'Use pnpm, never npm, in this repository.\n**Why:** the lockfile is pnpm-lock.yaml and npm rewrites it.\n**How to apply:** run pnpm install and pnpm test.',
        type: 'feedback',
      },
      {
        file: 'project_deploys.md',
        title: 'How deploys go',
        text: 'Deploys go to staging first; production only on Tuesdays.',
        type: 'project',
      },
      // Its file is not there: the index line is the memory.
      { file: 'MEMORY.md', title: 'Team wiki', text: 'Team wiki — where the runbooks live', type: null },
    ]);
  });
});

describe('the memory folder of a linked worktree', () => {
  it("is the main checkout's, as Claude Code names it (every worktree of a repository shares one memory)", () => {
    const s = setup({ 'MEMORY.md': INDEX, 'feedback_pnpm.md': PNPM });
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@x', ...args], { cwd: s.repo });
    git('commit', '-q', '--allow-empty', '-m', 'first');
    const wt = `${s.repo}-wt`;
    git('worktree', 'add', '-q', wt);
    const found = readNativeMemory(s.env, s.home, wt)!;
    expect(found.dir).toBe(s.dir);
    expect(found.facts.map((f) => f.file)).toEqual(['feedback_pnpm.md', 'MEMORY.md', 'MEMORY.md']);
  });
});

describe('cairn install --native-memory import', () => {
  it('sends each memory once, personal or the project by its type; importing twice stores nothing more', async () => {
    const s = setup({
      'MEMORY.md': INDEX,
      'feedback_pnpm.md': PNPM,
      'project_deploys.md': DEPLOYS,
      'reference_wiki.md': WIKI,
    });
    const before = notes.size;
    const first = await install(s, '--native-memory', 'import');
    expect(first.code).toBe(0);
    expect(first.out).toContain('3 new notes, 0 already there');
    expect(first.out).toContain('"autoMemoryEnabled": false');
    const sent = remembered();
    expect(sent.map((b) => [b.scope, b.title])).toEqual([
      ['personal', 'Package manager for this repository is pnpm'],
      ['project', 'How deploys go'],
      ['project', 'Where the runbooks live'],
    ]);
    expect(sent[1]!.project).toMatch(/^local\//);
    expect(notes.size - before).toBe(3);
    const second = await install(s, '--native-memory', 'import');
    expect(second.code).toBe(0);
    expect(second.out).toContain('0 new notes, 3 already there');
    expect(notes.size - before).toBe(3);
  });

  it("never imports cairn's own promoted block back", async () => {
    const promoted = [
      '<!-- cairn:promoted:start -->',
      '## Team rules (from cairn)',
      '- Always squash merges into main (cairn #12)',
      '<!-- cairn:promoted:end -->',
    ].join('\n');
    const s = setup({
      'MEMORY.md': `${INDEX}${promoted}\n`,
      'feedback_pnpm.md': `${PNPM}\n${promoted}\n`,
      'project_deploys.md': DEPLOYS,
      'reference_wiki.md': WIKI,
    });
    expect((await install(s, '--native-memory', 'import')).code).toBe(0);
    const sent = JSON.stringify(remembered());
    expect(sent).toContain('Use pnpm, never npm');
    expect(sent).not.toContain('squash');
    expect(sent).not.toContain('cairn #12');
  });

  it('refuses a memory file that is a link (its target is never read or sent), and a linked memory folder', async () => {
    const outside = tempDir('cairn-outside-');
    writeFileSync(join(outside, 'secret.md'), '---\nname: x\ndescription: y\n---\n\nSECRET-FROM-OUTSIDE\n');
    const s = setup({ 'MEMORY.md': INDEX, 'project_deploys.md': DEPLOYS });
    symlinkSync(join(outside, 'secret.md'), join(s.dir, 'feedback_pnpm.md'));
    const r = await install(s, '--native-memory', 'import');
    expect(r.code).toBe(0);
    expect(r.err).toContain('feedback_pnpm.md');
    expect(r.err).toContain('not read');
    expect(JSON.stringify(remembered())).not.toContain('SECRET-FROM-OUTSIDE');

    server.requests.length = 0;
    const t = setup();
    const elsewhere = tempDir('cairn-elsewhere-');
    writeFileSync(join(elsewhere, 'MEMORY.md'), '- LINKED-FOLDER-FACT that should stay unread\n');
    execFileSync('rm', ['-r', t.dir]);
    symlinkSync(elsewhere, t.dir);
    const linked = await install(t, '--native-memory', 'import');
    expect(linked.out).toContain('no Claude Code auto memory');
    expect(remembered()).toEqual([]);
  });
});

describe('cairn install --native-memory keep', () => {
  // Rows as the server renders them (src/recall/render-context.ts, render-personal.ts): the shared fact in a personal
  // note and again, cased and punctuated otherwise, as a full row with its body; and a row native memory lacks.
  const index = [
    '<cairn-context>',
    '# cairn memory · widgets · Sat 10:04 UTC',
    '## Yours: personal memory (every project; only you see it)',
    '41 Use pnpm, never npm, in this repository.',
    '## Sat 5 Dec',
    '**57** 10:02 🔵 **USE PNPM — never npm in this repository!**',
    ' the lockfile is pnpm-lock.yaml',
    '58 10:03 🔴 fixed the login race in the session cookie',
    'Tools: get_observations([ids]) · timeline(anchor=id) · search(query)',
    '</cairn-context>',
  ].join('\n');
  const fact = normalizeFact('Use pnpm, never npm, in this repository.');
  const count = (text: string) => normalizeFact(text).split(fact).length - 1;

  async function sessionStart(s: ReturnType<typeof setup>) {
    server.context.index = index;
    const io = memIo({ env: s.env, cwd: s.repo, stdin: hookJson({ cwd: s.repo, source: 'startup' }) });
    expect(await run(['hook', 'session-start'], io)).toBe(0);
    return (JSON.parse(io.stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput
      .additionalContext;
  }

  it('injects a fact that both memories hold once: the native memory gives it, cairn leaves its rows out', async () => {
    const s = setup({ 'MEMORY.md': INDEX, 'feedback_pnpm.md': PNPM });
    const r = await install(s, '--native-memory', 'keep');
    expect(r.code).toBe(0);
    expect(r.out).toContain('keeping both');
    expect(remembered()).toEqual([]);
    const injected = await sessionStart(s);
    // Claude Code injects its own memory (the fact once, in feedback_pnpm.md); cairn's index adds it no more.
    expect(count(PNPM)).toBe(1);
    expect(count(injected)).toBe(0);
    expect(injected).not.toContain('pnpm-lock.yaml');
    expect(injected).toContain('fixed the login race');
    expect(injected).toContain('</cairn-context>');
  });

  it('without keep (leave), or in another checkout, cairn injects its rows as before', async () => {
    const s = setup({ 'MEMORY.md': INDEX, 'feedback_pnpm.md': PNPM });
    await install(s, '--native-memory', 'keep');
    expect((await install(s, '--native-memory', 'leave')).code).toBe(0);
    expect(count(await sessionStart(s))).toBe(2);
    const other = setup({ 'MEMORY.md': INDEX, 'feedback_pnpm.md': PNPM });
    expect(count(await sessionStart(other))).toBe(2);
  });
});

describe('cairn install, not at a terminal', () => {
  it('leaves the native memory alone by default and says what it found; a bad choice is a usage error', async () => {
    const s = setup({ 'MEMORY.md': INDEX, 'feedback_pnpm.md': PNPM });
    const r = await install(s);
    expect(r.code).toBe(0);
    expect(r.out).toContain("found Claude Code's auto memory for this project (3 memories in");
    expect(r.out).toContain('left alone');
    expect(remembered()).toEqual([]);
    const bad = await install(s, '--native-memory', 'both');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--native-memory takes keep, import, leave');
  });
});

describe('hostile native memory text', () => {
  it('is parsed and compared within a fixed regex budget per character, and short or lone words leave no row out', () => {
    const long = 20_000;
    const texts = [
      `- [${'['.repeat(long)}`,
      `- [a](${'('.repeat(long)}`,
      `- [a](b.md) ${'—'.repeat(long)}x`,
      `---\n${'name:'.repeat(long)}\n---\n`,
      `---\n${' '.repeat(long)}description: x\n`,
      `${'-'.repeat(long)} [`,
    ];
    for (const text of texts) {
      const r = withBacktrackBudget(256, () => {
        const facts = nativeFacts(text, new Map([['a.md', text]]));
        return leaveOutKnown(`41 ${text}\n**42** 10:01 x\n ${text}`, factLines(facts)).left;
      });
      expect(
        r.over.map((o) => o.pattern),
        text.slice(0, 20),
      ).toEqual([]);
      expect(r.probed).toBeGreaterThan(0);
    }
    // A fact of one or two words ("pnpm", "## Notes") is no fact of its own: nothing is left out for it.
    const kept = factLines([{ file: 'a.md', title: 'pnpm', text: 'Notes\nuse pnpm', type: null }]);
    expect(kept).toEqual([]);
    const index = '<cairn-context>\n## Sat 5 Dec\n41 10:00 🔵 use pnpm for the widgets\n</cairn-context>';
    expect(leaveOutKnown(index, kept).left).toBe(0);
    // The frame and headings are never rows, whatever the facts.
    expect(leaveOutKnown(index, ['cairn context', 'sat 5 dec 41']).text).toContain('<cairn-context>\n## Sat 5 Dec');
  });
});
