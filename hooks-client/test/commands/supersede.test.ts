// `cairn supersede` and `cairn feedback`: what the client sends and what it tells the user.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/run';
import { fakeServer, machine, memIo, type FakeServer } from '../support';

let fake: FakeServer;
beforeAll(async () => {
  fake = await fakeServer();
  fake.handler = (req, res) => {
    if (!req.path.startsWith('/api/corrections/')) return false;
    const body = req.json ?? {};
    const send = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    if (body.id === 403)
      send(403, {
        error: { code: 'not_allowed', message: 'Only the author of #403 or a team admin can supersede it.' },
      });
    else if (req.path === '/api/corrections/supersede')
      send(200, { superseded: body.id, by: body.by ?? null, previous: null });
    else send(200, { id: body.id, kind: body.kind, counted: true });
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

describe('cairn supersede', () => {
  it('sends the id, the replacement and the reason, and says the record left the context index', async () => {
    const r = await cairn('supersede', '#12', '--by', '13', '--reason', 'moved to GitHub Actions');
    expect(r.code).toBe(0);
    expect(r.sent?.path).toBe('/api/corrections/supersede');
    expect(r.sent?.json).toEqual({ id: 12, by: 13, reason: 'moved to GitHub Actions' });
    expect(r.out).toContain('#12 is superseded by #13');
  });

  it('marks a record outdated when no replacement is named', async () => {
    const r = await cairn('supersede', '12', '--reason', 'gone');
    expect(r.sent?.json).toEqual({ id: 12, reason: 'gone' });
    expect(r.out).toContain('#12 is marked outdated');
  });

  it('refuses to send without a reason or with a bad id', async () => {
    for (const argv of [
      ['supersede', '12'],
      ['supersede', 'twelve', '--reason', 'x'],
      ['supersede', '12', '--by', 'x', '--reason', 'y'],
    ]) {
      const r = await cairn(...argv);
      expect(r.code).toBe(2);
      expect(r.sent).toBeUndefined();
      expect(r.err).toContain('usage: cairn supersede');
    }
  });

  it("passes the server's refusal on", async () => {
    const r = await cairn('supersede', '403', '--reason', 'x');
    expect(r.code).toBe(1);
    expect(r.err).toContain('Only the author of #403');
  });
});

describe('cairn feedback', () => {
  it('flags a record wrong with a reason', async () => {
    const r = await cairn('feedback', '12', 'wrong', '--reason', 'the port is 8443');
    expect(r.code).toBe(0);
    expect(r.sent?.json).toEqual({ id: 12, kind: 'wrong', reason: 'the port is 8443' });
    expect(r.out).toContain('flagged wrong');
  });

  it('refuses a kind it does not know', async () => {
    const r = await cairn('feedback', '12', 'meh');
    expect(r.code).toBe(2);
    expect(r.sent).toBeUndefined();
  });
});
