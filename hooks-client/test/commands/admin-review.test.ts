// `cairn admin review`: the proposals waiting for a decision (what each would change), and accept/discard sent to
// the server; a malformed decision sends nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/run';
import { fakeServer, machine, memIo, type FakeServer } from '../support';

let fake: FakeServer;
beforeAll(async () => {
  fake = await fakeServer();
  fake.handler = (req, res) => {
    const send = (payload: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    if (req.path === '/api/admin/review') {
      send({
        flagged: [{}],
        superseded: [],
        held: [],
        proposals: [
          {
            id: 7,
            kind: 'merge',
            record: { id: 12, title: 'Token refresh fails on skew' },
            sources: [{ id: 9, title: 'Token refresh\nfails\u001b[2K on skew' }],
            reason: 'near-duplicate of #12 (similarity 0.91)',
            actor: 'consolidation',
          },
          {
            id: 8,
            kind: 'supersede',
            record: { id: 3, title: 'Flags from FLAGS' },
            by: { id: 4, title: 'Flags from flags.json' },
            reason: 'observer: moved',
            actor: 'observer',
          },
        ],
      });
      return true;
    }
    if (req.path.startsWith('/api/admin/proposals/')) {
      send({ id: 7, decision: req.json?.decision, records: [9] });
      return true;
    }
    return false;
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

describe('cairn admin review', () => {
  it('lists each proposal with what accepting it would change, one line a record', async () => {
    const r = await cairn('admin', 'review');
    expect(r.code).toBe(0);
    expect(r.out).toContain('proposal 7 (consolidation): merge #9 into #12 "Token refresh fails on skew"');
    expect(r.out).toContain(`  #9 "Token refresh fails[2K on skew" leaves search and the context index`);
    expect(r.out).toContain('proposal 8 (observer): #3 "Flags from FLAGS" superseded by #4 "Flags from flags.json"');
    expect(r.out).toContain('flagged 1 · superseded 0 · held 0');
    expect(r.out).not.toContain('\u001b');
  });

  it('sends a decision and says what changed', async () => {
    const r = await cairn('admin', 'review', 'accept', '7');
    expect(r.code).toBe(0);
    expect(r.sent?.path).toBe('/api/admin/proposals/7');
    expect(r.sent?.json).toEqual({ decision: 'accept' });
    expect(r.out).toContain('proposal 7 accepted: #9 changed');
    expect((await cairn('admin', 'review', 'discard', '7')).out).toContain('proposal 7 discarded: #9 as they were');
  });

  it.each([[['review', 'approve', '7']], [['review', 'accept']], [['review', 'accept', 'x']]])(
    'refuses %j and sends nothing',
    async (argv) => {
      const r = await cairn('admin', ...argv);
      expect(r.code).toBe(2);
      expect(r.sent).toBeUndefined();
    },
  );
});
