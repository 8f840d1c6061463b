// `cairn history`, `cairn edit` and `cairn revert`: what the client sends, what it prints (the server's text through
// the terminal filter), and the usage errors that send nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/run';
import { fakeServer, machine, memIo, type FakeServer } from '../support';

let fake: FakeServer;
beforeAll(async () => {
  fake = await fakeServer();
  fake.handler = (req, res) => {
    if (!req.path.startsWith('/api/corrections/')) return false;
    const body = req.json ?? {};
    const send = (status: number, payload: unknown, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type });
      res.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
    };
    if (body.id === 403)
      send(403, { error: { code: 'not_allowed', message: 'Only the author of #403 or a team admin can edit it.' } });
    else if (req.path.startsWith('/api/corrections/history'))
      send(200, '#12 · 2 versions, current: version 2\nv2 · edit by @ana\u001b]52;c;aGk=\u0007\n', 'text/plain');
    else if (req.path.startsWith('/api/corrections/diff')) send(200, '#12 · version 1 → version 2\n', 'text/plain');
    else if (req.path === '/api/corrections/edit') send(200, { id: body.id, version: 2, changed: ['title'] });
    else send(200, { id: body.id, version: 3, changed: ['title'], reverted_to: body.to });
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

describe('cairn history', () => {
  it("prints the server's versions text with control characters filtered out", async () => {
    const r = await cairn('history', '#12');
    expect(r.code).toBe(0);
    expect(r.sent?.path).toBe('/api/corrections/history?id=12&format=text');
    expect(r.out).toContain('v2 · edit by @ana');
    expect(r.out).not.toContain('\u001b');
  });

  it('asks for a diff between versions, to the current one by default', async () => {
    expect((await cairn('history', '12', '--diff', '1')).sent?.path).toBe(
      '/api/corrections/diff?id=12&from=1&format=text',
    );
    expect((await cairn('history', '12', '--diff', '1:3', '--json')).sent?.path).toBe(
      '/api/corrections/diff?id=12&from=1&to=3&format=json',
    );
  });
});

describe('cairn edit', () => {
  it('sends only the fields given, lists repeated, and says the new version', async () => {
    const r = await cairn(
      'edit',
      '12',
      '--title',
      'Cache in Valkey',
      '--fact',
      'port 6380',
      '--fact',
      'TLS',
      '--reason',
      'moved',
    );
    expect(r.code).toBe(0);
    expect(r.sent?.json).toEqual({ id: 12, title: 'Cache in Valkey', facts: ['port 6380', 'TLS'], reason: 'moved' });
    expect(r.out).toContain('#12 edited (title); it is version 2 now');
    expect((await cairn('edit', '12', '--no-files')).sent?.json).toEqual({ id: 12, files: [] });
  });

  it("passes the server's refusal on", async () => {
    const r = await cairn('edit', '403', '--title', 'x');
    expect(r.code).toBe(1);
    expect(r.err).toContain('Only the author of #403');
  });
});

describe('cairn revert', () => {
  it('sends the version to go back to', async () => {
    const r = await cairn('revert', '12', '--to', '1', '--reason', 'the edit was wrong');
    expect(r.code).toBe(0);
    expect(r.sent?.json).toEqual({ id: 12, to: 1, reason: 'the edit was wrong' });
    expect(r.out).toContain('#12 is back to version 1');
  });
});

describe('usage errors send nothing', () => {
  it.each([
    [['history']],
    [['history', 'twelve']],
    [['history', '12', '--diff', 'x']],
    [['edit', '12']],
    [['edit', 'x', '--title', 'y']],
    [['revert', '12']],
    [['revert', '12', '--to', '0']],
    [['revert', '12', '--to', 'first']],
  ])('%j', async (argv) => {
    const r = await cairn(...argv);
    expect(r.code).toBe(2);
    expect(r.sent).toBeUndefined();
    expect(r.err).toContain('usage: cairn');
  });
});
