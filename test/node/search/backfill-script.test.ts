// scripts/backfill.mjs against a fake cairn on 127.0.0.1: loops until nothing remains, retries 503, fails loudly.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = path.resolve(__dirname, '../../../scripts/backfill.mjs');
let server: Server | undefined;

afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

/** A fake that answers each POST with the next scripted reply and records what it was asked. */
async function fake(replies: { status: number; body: unknown; headers?: Record<string, string> }[]) {
  const seen: { url: string; auth: string | undefined }[] = [];
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', auth: req.headers.authorization });
    const next = replies.shift() ?? { status: 500, body: {} };
    res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers });
    res.end(JSON.stringify(next.body));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, seen };
}

function run(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SCRIPT, ...args], { env: { ...process.env, CAIRN_URL: '', CAIRN_TOKEN: '' } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

describe('npm run backfill', () => {
  it('calls the backfill route with the token until nothing remains', async () => {
    const f = await fake([
      { status: 200, body: { indexed: 500, removed: 0, failed: 0, remaining: 300, index: 'vectorize' } },
      { status: 503, body: { error: { code: 'embedding_failed' } }, headers: { 'retry-after': '0' } },
      { status: 200, body: { indexed: 300, removed: 0, failed: 0, remaining: 0, index: 'vectorize' } },
    ]);
    const { code, out } = await run(['--url', `${f.url}/`, '--token', 'cairn_abc', '--limit', '500']);
    expect(code).toBe(0);
    expect(out).toContain('done: 800 observations embedded');
    expect(f.seen).toHaveLength(3);
    expect(f.seen[0]).toEqual({ url: '/api/admin/backfill-vectors?limit=500', auth: 'Bearer cairn_abc' });
  });

  it('exits non-zero on a refusal such as a token without the admin scope', async () => {
    const f = await fake([{ status: 403, body: { error: { code: 'insufficient_scope' } } }]);
    const { code, out } = await run(['--url', f.url, '--token', 'cairn_member']);
    expect(code).toBe(1);
    expect(out).toContain('insufficient_scope');
  });

  it('prints usage without a url or token', async () => {
    const { code, out } = await run([]);
    expect(code).toBe(2);
    expect(out).toContain('usage');
  });
});
