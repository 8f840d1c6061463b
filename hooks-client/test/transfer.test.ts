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
beforeAll(async () => {
  fake = await fakeServer();
  fake.handler = (req, res) => {
    if (req.path.startsWith('/api/admin/export')) {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.end(`${LINES.join('\n')}\n`);
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
});
