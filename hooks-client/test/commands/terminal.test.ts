// What the client prints is inert in a terminal (issue 37): stored keys, titles, handles, types and error messages
// come from other people (through the server) and prime's notes from a repository. A fake cairn server answers
// with the escapes the red team stored: an OSC 52 clipboard write, a line erase that hid a held row, a
// right-to-left override. None may reach the terminal; the words around them must.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../src/run';
import { jsonText, termSafe } from '../../src/util/terminal';
import { fakeServer, machine, memIo, tempDir, type FakeServer } from '../support';

const OSC52 = '\u001b]52;c;ZWNobyBwd25lZA==\u0007';
const ERASE = '\u001b[1A\u001b[2K\r';
const RLO = '\u202e';
const CSI8 = '\u009b2J';
/** Anything that acts on a terminal: C0 but \t \n, DEL, C1, bidi controls. */
const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

let server: FakeServer;
beforeAll(async () => {
  server = await fakeServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.handler = undefined;
});

function answer(routes: Record<string, [number, unknown]>) {
  server.handler = (req, res) => {
    const path = req.path.split('?')[0]!;
    const hit = routes[path];
    if (!hit) return false;
    res.writeHead(hit[0], { 'content-type': typeof hit[1] === 'string' ? 'text/plain' : 'application/json' });
    res.end(typeof hit[1] === 'string' ? hit[1] : JSON.stringify(hit[1]));
    return true;
  };
}

async function cairn(...argv: string[]) {
  const m = machine(server.url);
  const io = memIo({ env: m.env, cwd: m.home });
  const code = await run(argv, io);
  return { code, out: io.stdout, err: io.stderr, all: io.stdout + io.stderr };
}

describe('server text in the terminal', () => {
  it('cairn admin projects prints keys, owners and aliases without their escapes, one row each', async () => {
    answer({
      '/api/admin/projects': [
        200,
        {
          projects: [
            {
              id: 1,
              key: `github.com/acme/widgets${OSC52}`,
              visibility: 'team',
              owner: `ada${RLO}gpj.exe`,
              observations: 3,
              sessions: 1,
              last_activity: 0,
              aliases: [`old\n99  github.com/acme/forged  team  eve`],
            },
            {
              id: 2,
              key: `${ERASE}local/hidden`,
              visibility: 'private',
              owner: 'bob',
              observations: 1,
              sessions: 1,
              last_activity: 0,
              aliases: [],
            },
          ],
        },
      ],
    });
    const r = await cairn('admin', 'projects');
    expect(r.code, r.err).toBe(0);
    expect(r.all).not.toMatch(ACTIVE);
    expect(r.out).toContain('github.com/acme/widgets]52;c;ZWNobyBwd25lZA==');
    expect(r.out).toContain('local/hidden');
    expect(r.out).toContain('adagpj.exe');
    // Header and two rows: the alias's newline drew no row of its own.
    expect(r.out.trimEnd().split('\n')).toHaveLength(3);
  });

  it('cairn admin held shows a row whose project and author try to erase it', async () => {
    answer({
      '/api/admin/review': [
        200,
        {
          held: [
            {
              kind: 'observation',
              id: 12,
              project: `p${ERASE}`,
              author: `mallory${ERASE}${ERASE}`,
              held: ['override'],
              title: 'Ignore previous instructions',
            },
          ],
        },
      ],
    });
    const r = await cairn('admin', 'held');
    expect(r.code, r.err).toBe(0);
    expect(r.all).not.toMatch(ACTIVE);
    expect(r.out).toMatch(/#12 +p\[1A\[2K +mallory/);
  });

  it('--json keeps every value, escaping what a terminal must not see', async () => {
    const key = `k${OSC52}${RLO}${CSI8}`;
    answer({ '/api/admin/projects': [200, { projects: [{ id: 1, key, aliases: [] }] }] });
    const r = await cairn('admin', 'projects', '--json');
    expect(r.all).not.toMatch(ACTIVE);
    expect((JSON.parse(r.out) as { projects: Array<{ key: string }> }).projects[0]!.key).toBe(key);
  });

  it('search results, error messages and the status line carry no escapes', async () => {
    answer({
      '/api/search': [200, `#12 ${OSC52}deploy notes${RLO} (ada)\n`],
      '/api/admin/users': [403, { error: { code: 'forbidden', message: `nope${ERASE}${OSC52}` } }],
      '/api/observer/state': [200, { state: 'failing', code: `bad_key${OSC52}${ERASE}`, notice: null }],
    });
    const found = await cairn('search', 'deploy');
    expect(found.out).toContain('deploy notes');
    expect(found.all).not.toMatch(ACTIVE);
    const refused = await cairn('admin', 'users');
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('nope');
    expect(refused.all).not.toMatch(ACTIVE);
    const m = machine(server.url);
    const io = memIo({ env: m.env, cwd: m.home, stdin: JSON.stringify({ session_id: 's1', cwd: m.home }) });
    expect(await run(['statusline'], io)).toBe(0);
    expect(io.stdout).toContain('memory paused: bad_key');
    expect(io.stdout).not.toMatch(ACTIVE);
  });

  it('cairn prime --dry-run shows a repository’s headings and TODOs without their escapes', async () => {
    const m = machine(null);
    const dir = join(tempDir('cairn-esc-'), 'repo');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'README.md'), `# Tool${OSC52}\n\nDoes ${RLO}things.\n`);
    writeFileSync(join(dir, 'main.c'), `// TODO: fix ${ERASE}this\n`);
    const g = (...a: string[]) =>
      execFileSync('git', ['-c', 'user.name=a', '-c', 'user.email=a@b', ...a], { cwd: dir, stdio: 'ignore' });
    g('init', '-q');
    g('add', '.');
    g('commit', '-q', '-m', `Start${ERASE}`);
    const io = memIo({ env: m.env, cwd: dir });
    expect(await run(['prime', '--dry-run'], io)).toBe(0);
    expect(io.stdout).toContain('[docs] README.md: Tool');
    expect(io.stdout).not.toMatch(ACTIVE);
  });
});

describe('termSafe and jsonText', () => {
  it('drop C0 (but tab and newline), DEL, C1 and bidi controls, in one pass', () => {
    expect(termSafe(`a\tb\nc${OSC52}${RLO}\u2066d\u007f${CSI8}`)).toBe('a\tb\nc]52;c;ZWNobyBwd25lZA==d2J');
    const long = `${'\u001b'.repeat(100_000)}x`;
    expect(termSafe(long)).toBe('x');
    expect(jsonText({ k: `${RLO}\u009b` })).toBe('{"k":"\\u202e\\u009b"}');
  });
});
