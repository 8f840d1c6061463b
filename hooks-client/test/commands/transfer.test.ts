// `cairn export` / `cairn import --ndjson` against a fake server: the file written, the parts sent, the bar.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ndjsonParts, paceMs, progressBar } from '../../src/commands/transfer';
import { run } from '../../src/run';
import { fakeServer, machine, memIo, tempDir, type FakeServer } from '../support';

const LINES = Array.from({ length: 5 }, (_, i) =>
  JSON.stringify({ kind: 'user', handle: `u${i}`, role: 'member', created_at: i }),
);

let fake: FakeServer;
const imported: string[] = [];
/** Set: the import answers 202 with a job that is running on its first poll and then ends this way. */
let jobEnd: 'done' | 'failed' | null = null;
const polls = new Map<string, number>();
const job = (id: string, status: string, done: number, total: number, extra: Record<string, unknown> = {}) => ({
  id,
  kind: 'import',
  status,
  progress: { done, total, unit: 'records', phase: 'writing records' },
  result: null,
  error: null,
  created_at: 0,
  started_at: 0,
  updated_at: 0,
  finished_at: null,
  started_by: 'me',
  stats: {},
  ...extra,
});
/** From the next job poll on, refuse polls with 429 (Retry-After: 1 s) for this many ms; how many were refused. */
let pollsRefusedFor = 0;
let refusedUntil = 0;
let refusedPolls = 0;
/** Import requests still to refuse with 429 (Retry-After: 1 s); the rate-limit headers of a stored part; the embed job it names. */
let busy = 0;
let limitHeaders: Record<string, string> = {};
let embedJob: string | null = null;
/** The server's resumable export, as GET /api/admin/export?cursor= answers it: cursor tokens here are line numbers. */
let exported = LINES;
/** Responses still to cut off mid-line (the socket destroyed), then responses still to refuse with 503. */
let cuts = 0;
let refusals = 0;
const EXPORT_RESPONSE = 120;
function exportResponse(cursor: string): string {
  const from = cursor === 'start' ? 0 : Number(cursor);
  const to = Math.min(exported.length, from + EXPORT_RESPONSE);
  let body = '';
  for (let i = from; i < to; i++) {
    body += `${exported[i]}\n`;
    if ((i + 1) % 25 === 0 && i + 1 < to) body += `${JSON.stringify({ kind: 'cursor', next: String(i + 1) })}\n`;
  }
  return `${body}${to === exported.length ? '{"kind":"end"}' : JSON.stringify({ kind: 'cursor', next: String(to) })}\n`;
}
beforeAll(async () => {
  fake = await fakeServer();
  fake.handler = (req, res) => {
    if (req.path.startsWith('/api/admin/export')) {
      const body = exportResponse(new URL(req.path, 'http://x').searchParams.get('cursor') ?? 'start');
      if (refusals > 0 && cuts === 0) {
        refusals--;
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'restarting', message: 'Your worker restarted mid-request.' } }));
        return true;
      }
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      if (cuts > 0) {
        cuts--;
        // Two thirds of the response, ending inside a line, then the connection drops.
        res.write(body.slice(0, Math.floor(body.length * 0.66)));
        setTimeout(() => res.socket?.destroy(), 20);
        return true;
      }
      res.end(body);
      return true;
    }
    if (req.path === '/api/admin/import' && jobEnd !== null) {
      imported.push(req.body);
      const n = req.body.trim().split('\n').length;
      const id = `job_${imported.length}`;
      polls.set(id, 0);
      res.writeHead(202, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          records: n,
          planned: { users: 0, projects: 0, sessions: 0, prompts: 0, observations: n, summaries: 0 },
          job: job(id, 'queued', 0, n),
        }),
      );
      return true;
    }
    if (req.path.startsWith('/api/jobs/job_')) {
      if (pollsRefusedFor > 0) {
        refusedUntil = Date.now() + pollsRefusedFor;
        pollsRefusedFor = 0;
      }
      if (Date.now() < refusedUntil) {
        refusedPolls++;
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
        res.end(JSON.stringify({ error: { code: 'rate_limited', message: 'Too many read requests; retry in 1s.' } }));
        return true;
      }
      const id = req.path.slice('/api/jobs/'.length);
      const n = (polls.get(id) ?? 0) + 1;
      polls.set(id, n);
      const total = imported[Number(id.slice(4)) - 1]!.trim().split('\n').length;
      const body =
        n === 1
          ? job(id, 'running', 1, total)
          : jobEnd === 'done'
            ? job(id, 'done', total, total, {
                result: { records: total, imported: { observations: total - 1, projects: 0 } },
              })
            : job(id, 'failed', 1, total, {
                error: {
                  code: 'session_conflict',
                  message: 'Line 1: the session "s" cannot be imported into; change its key in the file.',
                },
              });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ job: body }));
      return true;
    }
    if (req.path === '/api/admin/import') {
      if (busy > 0) {
        busy--;
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
        res.end(JSON.stringify({ error: { code: 'rate_limited', message: 'Too many read requests; retry in 1s.' } }));
        return true;
      }
      imported.push(req.body);
      const n = req.body.trim().split('\n').length;
      res.writeHead(200, { 'content-type': 'application/json', ...limitHeaders });
      res.end(
        JSON.stringify({
          records: n,
          imported: { users: n, projects: 0 },
          ...(embedJob ? { embed_job: embedJob } : {}),
        }),
      );
      return true;
    }
    return false;
  };
});
afterAll(() => fake.close());

describe('cairn export and import --ndjson', () => {
  it('draws a bar and cuts files into parts without splitting a line', () => {
    expect(progressBar(1, 4, 8)).toBe('[##------] 25% 1/4 records');
    expect(ndjsonParts('a\nb\n\nc\n', 2)).toEqual([['a', 'b'], ['c']]);
    expect(ndjsonParts('aaaa\nbbbb\ncc', 10, 10)).toEqual([['aaaa', 'bbbb'], ['cc']]);
  });

  it('writes the export to the file and counts its records', async () => {
    const file = join(tempDir('cairn-export-'), 'team.ndjson');
    const io = memIo({ env: machine(fake.url).env });
    expect(await run(['export', '--output', file, '--project', 'github.com/a/b'], io)).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(`${LINES.join('\n')}\n`);
    expect(io.stderr).toContain('exported 5 records');
    expect(fake.requests.at(-1)?.path).toBe('/api/admin/export?project=github.com%2Fa%2Fb&cursor=start');
    expect(existsSync(`${file}.resume`)).toBe(false);
  });

  describe('over a connection that breaks', () => {
    const many = Array.from({ length: 1_000 }, (_, i) =>
      JSON.stringify({ kind: 'observation', title: `record ${i} ${'x'.repeat(i % 97)}`, created_at: i }),
    );
    const whole = `${many.join('\n')}\n`;
    beforeAll(() => {
      exported = many;
    });
    afterAll(() => {
      exported = LINES;
      cuts = 0;
      refusals = 0;
    });

    it('asks again from the last cursor when a response is cut mid-line, and writes the same file as an unbroken export', async () => {
      const dir = tempDir('cairn-export-');
      const env = { ...machine(fake.url).env, CAIRN_EXPORT_RETRY_MS: '1' };
      expect(await run(['export', '--output', join(dir, 'unbroken.ndjson')], memIo({ env }))).toBe(0);
      expect(readFileSync(join(dir, 'unbroken.ndjson'), 'utf8')).toBe(whole);
      cuts = 3;
      const before = fake.requests.length;
      const io = memIo({ env });
      expect(await run(['export', '--output', join(dir, 'cut.ndjson')], io)).toBe(0);
      expect(cuts).toBe(0);
      expect(readFileSync(join(dir, 'cut.ndjson'), 'utf8')).toBe(whole);
      expect(io.stderr).toContain('exported 1,000 records');
      // Each cut response is asked for again from a cursor inside it, not from the start.
      const asked = fake.requests.slice(before).map((r) => new URL(r.path, 'http://x').searchParams.get('cursor'));
      expect(asked.slice(0, 4)).toEqual(['start', '75', '150', '225']);
    });

    it('leaves a resume point when it gives up, and the same command run again finishes the file from there', async () => {
      const file = join(tempDir('cairn-export-'), 'team.ndjson');
      const env = { ...machine(fake.url).env, CAIRN_EXPORT_RETRY_MS: '1' };
      cuts = 1;
      refusals = 4;
      const first = memIo({ env });
      expect(await run(['export', '--output', file], first)).toBe(1);
      expect(first.stderr).toContain('export interrupted after 75 records');
      expect(first.stderr).toContain('run the same command again to resume');
      expect(existsSync(`${file}.resume`)).toBe(true);
      const again = memIo({ env });
      expect(await run(['export', '--output', file], again)).toBe(0);
      expect(again.stderr).toContain('resuming the export after 75 records');
      expect(readFileSync(file, 'utf8')).toBe(whole);
      expect(existsSync(`${file}.resume`)).toBe(false);
    });
  });

  it('imports a file record by record in order, showing progress, and sums what was new', async () => {
    const file = join(tempDir('cairn-import-'), 'team.ndjson');
    writeFileSync(file, `${LINES.join('\n')}\n`);
    imported.length = 0;
    const io = memIo({ env: machine(fake.url).env });
    expect(await run(['import', '--ndjson', file], io)).toBe(0);
    expect(imported.join('')).toBe(`${LINES.join('\n')}\n`);
    expect(io.stderr).toContain('100% 5/5 records');
    expect(io.stdout).toContain('imported 5 records: new 5 users, 0 projects');
  });

  it('sends each part once and asks nothing else when the server stores it in the request, then says the vectors follow', async () => {
    const file = join(tempDir('cairn-import-'), 'team.ndjson');
    writeFileSync(
      file,
      `${Array.from({ length: 600 }, (_, i) => JSON.stringify({ kind: 'user', handle: `u${i}`, role: 'member', created_at: i })).join('\n')}\n`,
    );
    imported.length = 0;
    embedJob = 'job_embed1';
    const before = fake.requests.length;
    try {
      const io = memIo({ env: machine(fake.url).env });
      expect(await run(['import', '--ndjson', file], io)).toBe(0);
      // Three parts of ≤ 250 records: three round trips, no job polled, no wait between them.
      expect(fake.requests.slice(before).map((r) => r.path)).toEqual([
        '/api/admin/import',
        '/api/admin/import',
        '/api/admin/import',
      ]);
      expect(io.stdout).toContain('imported 600 records: new 600 users');
      expect(io.stderr).toContain('their vectors follow in the background (job job_embed1)');
      expect(io.stderr).not.toContain('pausing');
    } finally {
      embedJob = null;
    }
  });

  it('waits as long as a 429 asks and sends the same part again', async () => {
    const file = join(tempDir('cairn-import-'), 'team.ndjson');
    writeFileSync(file, `${LINES.join('\n')}\n`);
    imported.length = 0;
    busy = 1;
    const before = fake.requests.length;
    const io = memIo({ env: machine(fake.url).env });
    expect(await run(['import', '--ndjson', file], io)).toBe(0);
    expect(busy).toBe(0);
    expect(fake.requests.slice(before).map((r) => r.path)).toEqual(['/api/admin/import', '/api/admin/import']);
    expect(imported).toEqual([`${LINES.join('\n')}\n`]);
    expect(io.stderr).toContain('the server asks to wait 1 s (429 rate_limited');
    expect(io.stdout).toContain('imported 5 records: new 5 users');
  });

  it("leaves a quarter of the token's read limit in each minute to its sessions", async () => {
    const h = (limit: number, remaining: number) =>
      new Headers({ 'x-ratelimit-limit': String(limit), 'x-ratelimit-remaining': String(remaining) });
    const minute = Date.parse('2026-12-03T10:00:00Z');
    // 30 of 120 left: the next part waits for the next one-minute window (the limiter's, on the server's clock).
    expect(paceMs(h(120, 30), minute + 59_000)).toBe(1_500);
    expect(paceMs(h(120, 31), minute + 59_000)).toBe(0);
    expect(paceMs(new Headers(), minute)).toBe(0);
    const file = join(tempDir('cairn-import-'), 'team.ndjson');
    writeFileSync(
      file,
      `${Array.from({ length: 300 }, (_, i) => JSON.stringify({ kind: 'user', handle: `u${i}`, role: 'member', created_at: i })).join('\n')}\n`,
    );
    limitHeaders = { 'x-ratelimit-limit': '8', 'x-ratelimit-remaining': '2' };
    try {
      const io = memIo({ env: machine(fake.url).env, now: () => minute + 59_800 });
      expect(await run(['import', '--ndjson', file], io)).toBe(0);
      // After the first part only: the last part needs no pause.
      expect(io.stderr.match(/pausing 1 s/g)).toHaveLength(1);
    } finally {
      limitHeaders = {};
    }
  });

  it("follows each part's import job to its end before sending the next part, and sums what the jobs stored", async () => {
    const file = join(tempDir('cairn-import-'), 'team.ndjson');
    writeFileSync(
      file,
      `${Array.from({ length: 300 }, (_, i) => JSON.stringify({ kind: 'user', handle: `u${i}`, role: 'member', created_at: i })).join('\n')}\n`,
    );
    imported.length = 0;
    jobEnd = 'done';
    try {
      const io = memIo({ env: { ...machine(fake.url).env, CAIRN_JOB_POLL_MS: '5' } });
      expect(await run(['import', '--ndjson', file], io)).toBe(0);
      // Part 2 went out only after part 1's job was done (two polls: running, then done).
      const paths = fake.requests
        .map((r) => r.path)
        .filter((p) => p === '/api/admin/import' || p.startsWith('/api/jobs/'));
      expect(paths.slice(-6)).toEqual([
        '/api/admin/import',
        '/api/jobs/job_1',
        '/api/jobs/job_1',
        '/api/admin/import',
        '/api/jobs/job_2',
        '/api/jobs/job_2',
      ]);
      expect(io.stderr).toContain('writing records');
      expect(io.stderr).toContain('100% 300/300 records');
      expect(io.stdout).toContain('imported 300 records: new 298 observations, 0 projects');
    } finally {
      jobEnd = null;
    }
  });

  it("waits out the token's read limit while following a part's job instead of giving the job up", async () => {
    const file = join(tempDir('cairn-import-'), 'team.ndjson');
    writeFileSync(file, `${LINES.join('\n')}\n`);
    imported.length = 0;
    jobEnd = 'done';
    // Refused for 0.5 s: polling every 5 ms that is ~100 refusals, past the 30 failed polls a client gives up after.
    pollsRefusedFor = 500;
    refusedPolls = 0;
    try {
      const io = memIo({ env: { ...machine(fake.url).env, CAIRN_JOB_POLL_MS: '5' } });
      expect(await run(['import', '--ndjson', file], io)).toBe(0);
      expect(refusedPolls).toBe(1);
      expect(io.stdout).toContain('imported 5 records');
    } finally {
      jobEnd = null;
      refusedUntil = 0;
    }
  });

  it('stops at a part whose job failed, saying why and how far it got', async () => {
    const file = join(tempDir('cairn-import-'), 'team.ndjson');
    writeFileSync(file, `${LINES.join('\n')}\n`);
    imported.length = 0;
    jobEnd = 'failed';
    try {
      const io = memIo({ env: { ...machine(fake.url).env, CAIRN_JOB_POLL_MS: '5' } });
      expect(await run(['import', '--ndjson', file], io)).toBe(1);
      expect(io.stderr).toContain('import stopped after 0 of 5 records');
      expect(io.stderr).toContain('session_conflict');
    } finally {
      jobEnd = null;
    }
  });
});
