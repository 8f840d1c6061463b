// `cairn forget`: what the client asks the server for each kind, and what it tells the user.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordBody } from '../src/commands/forget';
import { run } from '../src/run';
import { fakeServer, machine, memIo, type FakeServer } from './support';

let fake: FakeServer;
beforeAll(async () => {
  fake = await fakeServer();
  fake.handler = (req, res) => {
    if (req.path !== '/api/forget') return false;
    const body = req.json ?? {};
    const send = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    if (body.kind === 'project' && body.confirm !== 7) {
      send(409, { error: { code: 'confirm_required', message: 'Forgetting "github.com/a/b" deletes 4 observations, 2 summaries and 1 prompts in 2 sessions. Send the request again with "confirm": 7.' } });
    } else if (body.kind === 'observation' && body.id === 404) {
      send(404, { error: { code: 'not_found', message: 'No observation #404.' } });
    } else {
      send(200, { forgotten: `${String(body.kind)}:${String(body.id ?? body.session_id ?? body.project)}`, counts: { observations: 1, summaries: 0, prompts: 0, sessions: 0 } });
    }
    return true;
  };
});
afterAll(() => fake.close());

async function cairn(...argv: string[]) {
  const io = memIo({ env: machine(fake.url).env });
  const code = await run(['forget', ...argv], io);
  return { code, out: io.stdout, err: io.stderr, sent: fake.requests.at(-1)?.json };
}

describe('cairn forget', () => {
  it('reads record ids the way search prints them', () => {
    expect(recordBody('12')).toEqual({ kind: 'observation', id: 12 });
    expect(recordBody('#12')).toEqual({ kind: 'observation', id: 12 });
    expect(recordBody('S3')).toEqual({ kind: 'summary', id: 3 });
    expect(recordBody('p9')).toEqual({ kind: 'prompt', id: 9 });
    expect(recordBody('twelve')).toBeNull();
  });

  it('forgets a summary by its S id and says what went', async () => {
    const r = await cairn('S3');
    expect(r.code).toBe(0);
    expect(r.sent).toEqual({ kind: 'summary', id: 3 });
    expect(r.out).toContain('forgot summary:3 (1 observations)');
  });

  it('forgets a session', async () => {
    const r = await cairn('--session', 'abc-123');
    expect(r.code).toBe(0);
    expect(r.sent).toEqual({ kind: 'session', session_id: 'abc-123' });
  });

  it('asks before a project goes, and tells the command that confirms it', async () => {
    const first = await cairn('--project', 'github.com/a/b');
    expect(first.code).toBe(1);
    expect(first.sent).toEqual({ kind: 'project', project: 'github.com/a/b' });
    expect(first.err).toContain('cairn forget --project github.com/a/b --confirm 7');
    const second = await cairn('--project', 'github.com/a/b', '--confirm', '7');
    expect(second.code).toBe(0);
    expect(second.sent).toEqual({ kind: 'project', project: 'github.com/a/b', confirm: 7 });
  });

  it('reports a refusal and rejects a malformed id without calling the server', async () => {
    const missing = await cairn('404');
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('not_found');
    const before = fake.requests.length;
    const bad = await cairn('twelve');
    expect(bad.code).toBe(2);
    expect(fake.requests.length).toBe(before);
  });
});
