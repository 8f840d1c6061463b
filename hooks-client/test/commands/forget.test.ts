// `cairn forget`: what the client asks the server for each kind, and what it tells the user.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordBody } from '../../src/commands/forget';
import { run } from '../../src/run';
import { fakeServer, machine, memIo, type FakeServer } from '../support';

let fake: FakeServer;
let polls = 0;
const wireJob = (status: string, done: number) => ({
  id: 'job_abc',
  kind: 'forget-project',
  status,
  progress: { done, total: 7, unit: 'records', phase: 'deleting observations' },
  result: null,
  error: null,
  created_at: 1,
  started_at: 1,
  updated_at: 1,
  finished_at: status === 'done' ? 2 : null,
  started_by: 'me',
  stats: {
    steps: 1,
    statements: { max: 1, total: 1 },
    ms: { max: 1, total: 1 },
    held: { max: 0 },
    subrequests: { max: 0, total: 0 },
    budget: { statements: 200, ms: 5000, bytes: 1, subrequests: 100 },
  },
});
beforeAll(async () => {
  fake = await fakeServer();
  fake.handler = (req, res) => {
    if (req.path.startsWith('/api/jobs/')) {
      // The job the project's forget started: running on the first look, done on the second.
      polls++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ job: wireJob(polls >= 2 ? 'done' : 'running', polls >= 2 ? 7 : 3) }));
      return true;
    }
    if (req.path !== '/api/forget') return false;
    const body = req.json ?? {};
    const send = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    if (body.kind === 'project' && body.confirm !== 7) {
      send(409, {
        error: {
          code: 'confirm_required',
          message:
            'Forgetting "github.com/a/b" deletes 4 observations, 2 summaries and 1 prompts in 2 sessions. Send the request again with "confirm": 7.',
        },
      });
    } else if (body.kind === 'project') {
      send(202, {
        forgotten: 'project:github.com/a/b',
        counts: { observations: 4, summaries: 2, prompts: 1, sessions: 2 },
        job: wireJob('queued', 0),
      });
    } else if (body.kind === 'observation' && body.id === 404) {
      send(404, { error: { code: 'not_found', message: 'No observation #404.' } });
    } else {
      send(200, {
        forgotten: `${String(body.kind)}:${String(body.id ?? body.session_id ?? body.project)}`,
        counts: { observations: 1, summaries: 0, prompts: 0, sessions: 0 },
      });
    }
    return true;
  };
});
afterAll(() => fake.close());

async function cairn(...argv: string[]) {
  const io = memIo({ env: { ...machine(fake.url).env, CAIRN_JOB_POLL_MS: '5' } });
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
    expect(fake.requests.find((q) => q.path === '/api/forget' && q.json?.confirm === 7)?.json).toEqual({
      kind: 'project',
      project: 'github.com/a/b',
      confirm: 7,
    });
    // The server deletes it in a job, followed with a progress bar to its end.
    expect(second.err).toContain('[' + '#'.repeat(10));
    expect(second.err).toContain('7 / 7 records');
    expect(second.out).toContain('forgot project:github.com/a/b (7 records)');
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
