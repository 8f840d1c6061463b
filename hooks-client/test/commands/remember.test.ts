// `cairn remember [--personal]` and `cairn export --personal`: what the client sends, and what it tells the user.
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/run';
import { fakeServer, machine, memIo, type FakeServer } from '../support';

const EXPORT = '{"kind":"user","handle":"ana"}\n{"kind":"project","key":"#personal/ana"}\n';

let fake: FakeServer;
beforeAll(async () => {
  fake = await fakeServer();
  fake.handler = (req, res) => {
    if (req.path === '/api/memory/personal/export') {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.end(EXPORT);
      return true;
    }
    if (req.path !== '/api/memory/remember') return false;
    const body = req.json ?? {};
    res.writeHead(201, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 41,
        scope: body.scope,
        project: body.scope === 'personal' ? null : body.project,
        duplicate: false,
      }),
    );
    return true;
  };
});
afterAll(() => fake.close());

async function cairn(...argv: string[]) {
  const io = memIo({ env: machine(fake.url).env });
  const before = fake.requests.length;
  const code = await run(argv, io);
  return {
    code,
    out: io.stdout,
    err: io.stderr,
    sent: fake.requests.length > before ? fake.requests.at(-1) : undefined,
  };
}

describe('cairn remember', () => {
  it('--personal sends the note to the personal scope, with no project, and says only you see it', async () => {
    const r = await cairn('remember', '--personal', 'I', 'use', 'pnpm');
    expect(r.code).toBe(0);
    expect(r.sent?.path).toBe('/api/memory/remember');
    expect(r.sent?.json).toEqual({ scope: 'personal', text: 'I use pnpm' });
    expect(r.out).toContain('remembered as #41 in your personal memory (every project, only you)');
  });

  it("without --personal files the note under this folder's project (or --project)", async () => {
    const r = await cairn('remember', '--project', 'github.com/acme/widgets', 'deploys go through CI');
    expect(r.sent?.json).toEqual({
      scope: 'project',
      project: 'github.com/acme/widgets',
      text: 'deploys go through CI',
    });
    expect(r.out).toContain('in github.com/acme/widgets');
    const here = await cairn('remember', 'the cache is per locale');
    expect((here.sent?.json as { project?: string } | undefined)?.project).toMatch(/^local\//);
  });

  it('strips memory tags and redacts secrets before the note leaves the machine', async () => {
    const key = `AKIA${'Q'.repeat(12)}7EXM`;
    const r = await cairn('remember', '--personal', `my key ${key} <private>and a secret</private>`);
    const text = (r.sent?.json as { text: string } | undefined)?.text ?? '';
    expect(text).not.toContain(key);
    expect(text).not.toContain('and a secret');
    expect(text).toContain('[REDACTED:');
  });

  it('refuses an empty note or --personal with --project, and sends nothing', async () => {
    for (const argv of [
      ['remember'],
      ['remember', '--personal', '--project', 'x', 'y'],
      ['remember', '<private>x</private>'],
    ]) {
      const r = await cairn(...argv);
      expect(r.code).toBe(2);
      expect(r.sent).toBeUndefined();
      expect(r.err).toContain('usage: cairn remember');
    }
  });
});

describe('cairn export --personal', () => {
  it("writes the user's own memory to the file, readable only by them", async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'cairn-personal-')), 'me.ndjson');
    const r = await cairn('export', '--personal', '--output', out);
    expect(r.code).toBe(0);
    expect(r.sent?.path).toBe('/api/memory/personal/export');
    expect(readFileSync(out, 'utf8')).toBe(EXPORT);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    expect(r.err).toContain('exported 2 records of your personal memory');
    expect(existsSync(`${out}.resume`)).toBe(false);
  });
});

describe('cairn standup', () => {
  it('asks for the window, scope and project given, as text in the local time zone, and prints the answer', async () => {
    fake.handler = (req, res) => {
      if (!req.path.startsWith('/api/standup')) return false;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('Standup · team · …\n## github.com/acme/widgets\n  @ana\n    #12 feature: Token bucket\n');
      return true;
    };
    const r = await cairn('standup', '--since', '2w', '--team', '--project', 'github.com/acme/widgets');
    expect(r.code).toBe(0);
    const asked = new URL(r.sent!.path, 'http://x').searchParams;
    expect(Object.fromEntries(asked)).toMatchObject({
      since: '2w',
      team: '1',
      project: 'github.com/acme/widgets',
      format: 'text',
    });
    expect(r.out).toContain('#12 feature: Token bucket');
    expect((await cairn('standup', '--weekly')).code).toBe(2);
  });
});
