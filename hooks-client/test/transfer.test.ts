// `cairn export` / `cairn import --ndjson` against a fake server: the file written, the parts sent, the bar.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ndjsonParts, progressBar } from '../src/commands/transfer';
import { run } from '../src/run';
import { fakeServer, machine, memIo, tempDir, type FakeServer } from './support';

const LINES = Array.from({ length: 5 }, (_, i) => JSON.stringify({ kind: 'user', handle: `u${i}`, role: 'member', created_at: i }));

let fake: FakeServer;
const imported: string[] = [];
/** Set: the import answers 202 with a job that is running on its first poll and then ends this way. */
let jobEnd: 'done' | 'failed' | null = null;
const polls = new Map<string, number>();
const job = (id: string, status: string, done: number, total: number, extra: Record<string, unknown> = {}) => ({
  id, kind: 'import', status, progress: { done, total, unit: 'records', phase: 'writing records' }, result: null, error: null, created_at: 0, started_at: 0,
  updated_at: 0, finished_at: null, started_by: 'me', stats: {}, ...extra,
});
beforeAll(async () => {
  fake = await fakeServer();
  fake.handler = (req, res) => {
    if (req.path.startsWith('/api/admin/export')) {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.end(`${LINES.join('\n')}\n`);
      return true;
    }
    if (req.path === '/api/admin/import' && jobEnd !== null) {
      imported.push(req.body);
      const n = req.body.trim().split('\n').length;
      const id = `job_${imported.length}`;
      polls.set(id, 0);
      res.writeHead(202, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ records: n, planned: { users: 0, projects: 0, sessions: 0, prompts: 0, observations: n, summaries: 0 }, job: job(id, 'queued', 0, n) }));
      return true;
    }
    if (req.path.startsWith('/api/jobs/job_')) {
      const id = req.path.slice('/api/jobs/'.length);
      const n = (polls.get(id) ?? 0) + 1;
      polls.set(id, n);
      const total = imported[Number(id.slice(4)) - 1]!.trim().split('\n').length;
      const body =
        n === 1
          ? job(id, 'running', 1, total)
          : jobEnd === 'done'
            ? job(id, 'done', total, total, { result: { records: total, imported: { observations: total - 1, projects: 0 } } })
            : job(id, 'failed', 1, total, { error: { code: 'session_conflict', message: 'Line 1: the session "s" cannot be imported into; change its key in the file.' } });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ job: body }));
      return true;
    }
    if (req.path === '/api/admin/import') {
      imported.push(req.body);
      const n = req.body.trim().split('\n').length;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ records: n, imported: { users: n, projects: 0 } }));
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
    expect(fake.requests.at(-1)?.path).toBe('/api/admin/export?project=github.com%2Fa%2Fb');
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

  it('follows each part\'s import job to its end before sending the next part, and sums what the jobs stored', async () => {
    const file = join(tempDir('cairn-import-'), 'team.ndjson');
    writeFileSync(file, `${Array.from({ length: 300 }, (_, i) => JSON.stringify({ kind: 'user', handle: `u${i}`, role: 'member', created_at: i })).join('\n')}\n`);
    imported.length = 0;
    jobEnd = 'done';
    try {
      const io = memIo({ env: { ...machine(fake.url).env, CAIRN_JOB_POLL_MS: '5' } });
      expect(await run(['import', '--ndjson', file], io)).toBe(0);
      // Part 2 went out only after part 1's job was done (two polls: running, then done).
      const paths = fake.requests.map((r) => r.path).filter((p) => p === '/api/admin/import' || p.startsWith('/api/jobs/'));
      expect(paths.slice(-6)).toEqual(['/api/admin/import', '/api/jobs/job_1', '/api/jobs/job_1', '/api/admin/import', '/api/jobs/job_2', '/api/jobs/job_2']);
      expect(io.stderr).toContain('writing records');
      expect(io.stderr).toContain('100% 300/300 records');
      expect(io.stdout).toContain('imported 300 records: new 298 observations, 0 projects');
    } finally {
      jobEnd = null;
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
