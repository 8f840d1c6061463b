// The sentence model's Node service (scripts/sentence-embedder.mjs): it loads from its package's files with the
// network refused, embeds, and answers bad requests with 4xx and a stable code.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BATCH,
  DIMENSIONS,
  MAX_TEXTS,
  embedTexts,
  loadSentenceModel,
  startEmbedderServer,
} from '../../../scripts/sentence-embedder.mjs';

const cos = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);

describe('the sentence model', () => {
  it('loads from the package files without touching the network', async () => {
    const attempts: string[] = [];
    const saved = {
      fetch: globalThis.fetch,
      httpRequest: http.request,
      httpsRequest: https.request,
      connect: net.connect,
      createConnection: net.createConnection,
    };
    const refuse = (what: string) => () => {
      attempts.push(what);
      throw new Error(`network refused in this test: ${what}`);
    };
    globalThis.fetch = refuse('fetch') as typeof fetch;
    http.request = refuse('http.request') as typeof http.request;
    https.request = refuse('https.request') as typeof https.request;
    net.connect = refuse('net.connect') as typeof net.connect;
    net.createConnection = refuse('net.createConnection') as typeof net.createConnection;
    try {
      await loadSentenceModel();
      const [v] = await embedTexts(['a sentence to embed']);
      expect(v).toHaveLength(DIMENSIONS);
    } finally {
      Object.assign(globalThis, { fetch: saved.fetch });
      Object.assign(http, { request: saved.httpRequest });
      Object.assign(https, { request: saved.httpsRequest });
      Object.assign(net, { connect: saved.connect, createConnection: saved.createConnection });
    }
    expect(attempts).toEqual([]);
  });

  it('gives unit vectors, the same for the same text, closer for related sentences', async () => {
    const [a, again, near, far, empty] = await embedTexts([
      'I love skiing in the Alps',
      'I love skiing in the Alps',
      'winter sports are my favourite hobby',
      'the invoice total was wrong',
      '',
    ]);
    expect(Math.hypot(...a!)).toBeCloseTo(1, 5);
    expect(cos(a!, again!)).toBeCloseTo(1, 5);
    expect(cos(a!, near!)).toBeGreaterThan(cos(a!, far!));
    expect(empty!.every((x) => Number.isFinite(x))).toBe(true);
  });

  it('makes a query that arrives during a backfill wait for one small batch of stored rows, not the whole backfill', async () => {
    const model = (await loadSentenceModel()) as { embed(texts: string[]): Promise<number[][]> };
    const calls: string[] = [];
    const real = model.embed;
    let queried: Promise<unknown> | null = null;
    model.embed = function (texts: string[]) {
      calls.push(texts[0]!.startsWith('query') ? `query:${texts.length}` : `rows:${texts.length}`);
      // The query comes in while the backfill's first batch is in the model.
      queried ??= embedTexts(['query: where did the retry budget go?'], { query: true });
      return real.call(this, texts);
    };
    try {
      await embedTexts(Array.from({ length: 3 * BATCH }, (_, i) => `stored row number ${i} about the retry budget`));
      await queried;
    } finally {
      model.embed = real;
    }
    expect(BATCH).toBeLessThanOrEqual(4);
    expect(calls).toEqual([`rows:${BATCH}`, 'query:1', `rows:${BATCH}`, `rows:${BATCH}`]);
  });

  it('serves a search query before stored rows already waiting to be embedded', async () => {
    const done: string[] = [];
    const rows = embedTexts(Array.from({ length: 64 }, (_, i) => `stored row number ${i}`)).then((v) =>
      done.push(`rows:${v.length}`),
    );
    const query = embedTexts(['what did we decide about the cache?'], { query: true }).then((v) =>
      done.push(`query:${v.length}`),
    );
    await Promise.all([rows, query]);
    expect(done).toEqual(['query:1', 'rows:64']);
  });
});

describe('the sentence model service', () => {
  let server: { url: string; stop(): Promise<void> };
  beforeAll(async () => {
    server = await startEmbedderServer();
  });
  afterAll(() => server?.stop());

  const post = (body: string, path = '/embed', method = 'POST') =>
    fetch(new URL(path, server.url), { method, body: method === 'POST' ? body : undefined });

  it('embeds a batch in order', async () => {
    const res = await post(JSON.stringify({ texts: ['first', 'second'] }));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { dimensions: number; vectors: number[][] };
    expect(body.dimensions).toBe(DIMENSIONS);
    expect(body.vectors).toHaveLength(2);
    const [first] = await embedTexts(['first']);
    expect(cos(body.vectors[0]!, first!)).toBeCloseTo(1, 5);
  });

  it('refuses bad requests with a 4xx and a stable code', async () => {
    const cases: [Promise<Response>, number, string][] = [
      [post('not json'), 400, 'invalid_body'],
      [post(JSON.stringify({ texts: 'one' })), 400, 'invalid_body'],
      [post(JSON.stringify({ texts: [1, 2] })), 400, 'invalid_body'],
      [post(JSON.stringify({ texts: Array.from({ length: MAX_TEXTS + 1 }, () => 'x') })), 400, 'invalid_body'],
      [post(JSON.stringify({ texts: ['x'.repeat(3_000_000)] })), 413, 'body_too_large'],
      [post('', '/other'), 404, 'not_found'],
      [post('', '/embed', 'GET'), 405, 'method_not_allowed'],
    ];
    for (const [pending, status, code] of cases) {
      const res = await pending;
      expect(res.status).toBe(status);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
    }
  });

  it('cuts very long texts before embedding them, so one request stays bounded', async () => {
    const long = `skiing ${'and more words '.repeat(1000)}`;
    const res = await post(JSON.stringify({ texts: [long] }));
    expect(res.status).toBe(200);
    const [cut] = await embedTexts([long.slice(0, 2000)]);
    expect(cos(((await res.json()) as { vectors: number[][] }).vectors[0]!, cut!)).toBeCloseTo(1, 5);
  });
});
