// Where a team-wide hybrid query's time goes (issue 13): one wrangler dev of this tree with the sentence model,
// the search-teamwide bench's data (seeded once into BENCH_PROFILE_STATE and reused by later runs, copied so a
// run never changes it), then each query sent once and its Server-Timing phases and client latency printed as
// percentiles (BENCH_PROFILE_REF=<commit> profiles that commit instead). Not a `*.bench.mjs`: `npm run bench` does not run it. `node bench/search/profile.mjs`.
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { percentile, seed } from '../retrieval/harness.mjs';
import { observationsFor, QUERIES } from '../retrieval/synthetic.mjs';
import { variant } from './variants.mjs';
import { createServer } from 'node:http';
import { freePort, mintDevToken, startDevServer } from '../../scripts/dev-server.mjs';
import { checkoutBaseline } from '../baseline.mjs';
import { embedderHandler, loadSentenceModel } from '../../scripts/sentence-embedder.mjs';

const ROWS = Number(process.env.BENCH_SEARCH_ROWS ?? 100_000);
const EMBEDDED = 6_000;
const PROJECTS = 100;
const N = Number(process.env.BENCH_SAMPLES ?? 120);
const END = Date.UTC(2026, 10, 1);
const STATE = process.env.BENCH_PROFILE_STATE ?? path.join(tmpdir(), `cairn-search-profile-${ROWS}`);
const SECRET = 'profile-secret';
const log = (...a) => console.log(new Date().toISOString().slice(11, 19), ...a);

/** Query embeddings as the embedder sees them: its whole handling (body read to response end), wait and model. */
const embedderSide = { arrive: [], handle: [], wait: [], model: [] };
/** When the client sent the search being measured (epoch ms), to date the embedder's arrival against. */
let sentAt = 0;
let recording = false;

async function startEmbedder() {
  await loadSentenceModel();
  const server = createServer((req, res) => {
    const t = performance.now();
    const query = req.headers['x-embed-priority'] === 'query';
    res.on('finish', () => {
      if (!recording || !query) return;
      embedderSide.handle.push(performance.now() - t);
      embedderSide.arrive.push(performance.timeOrigin + t - sentAt);
      for (const part of String(res.getHeader('server-timing') ?? '').split(',')) {
        const m = /^\s*(wait|model);dur=([\d.]+)/.exec(part);
        if (m) embedderSide[m[1]].push(Number(m[2]));
      }
    });
    embedderHandler(req, res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/embed`,
    stop: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

// BENCH_PROFILE_REF profiles another commit (its Worker; the model service is this tree's, timed the same way).
const base = process.env.BENCH_PROFILE_REF ? checkoutBaseline(process.env.BENCH_PROFILE_REF) : null;

async function start(persistTo) {
  const embedder = await startEmbedder();
  const server = await startDevServer({
    root: base?.root,
    port: await freePort(),
    snapshot: true,
    persistTo,
    timeoutMs: 300_000,
    vars: {
      CAIRN_ADMIN_SECRET: SECRET,
      RATE_LIMIT_READ_PER_MIN: '10000000',
      RATE_LIMIT_INGEST_PER_MIN: '10000000',
      CAIRN_EMBEDDER_URL: embedder.url,
    },
  });
  const stop = async () => {
    await server.stop();
    await embedder.stop();
  };
  const token = await mintDevToken(server.url, SECRET, { team: 'bench', user: 'bencher', device: 'bench-box' });
  return { url: server.url, token, stop };
}

async function call(srv, method, pathAndQuery, body) {
  const t = performance.now();
  sentAt = performance.timeOrigin + t;
  const res = await fetch(`${srv.url}${pathAndQuery}`, {
    method,
    headers: { authorization: `Bearer ${srv.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${pathAndQuery} → ${res.status} ${text.slice(0, 300)}`);
  return { text, ms: performance.now() - t, timing: res.headers.get('server-timing') ?? '' };
}

if (!existsSync(STATE)) {
  const building = `${STATE}.building`;
  rmSync(building, { recursive: true, force: true });
  const srv = await start(building);
  try {
    const per = ROWS / PROJECTS;
    for (let p = 0; p < PROJECTS; p++) {
      await seed(
        srv,
        `github.com/bench/project-${String(p).padStart(3, '0')}`,
        `bench-${p}`,
        observationsFor(p, 0, per, END).map(({ symbol, ...o }) => o),
      );
    }
    log(`seeded ${ROWS}`);
    let embedded = 0;
    while (embedded < EMBEDDED) {
      const out = JSON.parse((await call(srv, 'POST', '/api/admin/backfill-vectors?limit=250')).text);
      embedded += out.indexed;
      if (out.indexed === 0) break;
    }
    log(`embedded ${embedded}`);
  } finally {
    await srv.stop();
  }
  cpSync(building, STATE, { recursive: true });
  rmSync(building, { recursive: true, force: true });
}

const copy = mkdtempSync(path.join(tmpdir(), 'cairn-search-profile-run-'));
cpSync(STATE, copy, { recursive: true });
const srv = await start(copy);
try {
  const enc = encodeURIComponent;
  const modes = [
    ['fts', (q) => `/api/search?q=${enc(q)}&mode=fts`],
    ['hybrid', (q) => `/api/search?q=${enc(q)}`],
    ['hybrid, repeated queries', (q) => `/api/search?q=${enc(q)}`, true],
  ];
  for (const [, path] of modes) await call(srv, 'GET', path(QUERIES[0]));
  recording = true;
  for (const [mode, path, repeated] of modes) {
    for (const xs of Object.values(embedderSide)) xs.length = 0;
    const phases = new Map();
    const client = [];
    for (let i = 0; i < N; i++) {
      // Each text new (a query-vector cache has not seen it; keyword search reads it as the original), or the 12 again.
      const q = repeated
        ? QUERIES[i % QUERIES.length]
        : variant(QUERIES[i % QUERIES.length], 1 + Math.floor(i / QUERIES.length));
      const r = await call(srv, 'GET', path(q));
      client.push(r.ms);
      for (const part of r.timing.split(',')) {
        const m = /^\s*([\w-]+);dur=([\d.]+)/.exec(part);
        if (!m) continue;
        if (!phases.has(m[1])) phases.set(m[1], []);
        phases.get(m[1]).push(Number(m[2]));
      }
    }
    const fmt = (xs) => {
      xs.sort((a, b) => a - b);
      return `p50 ${percentile(xs, 50).toFixed(1)}  p95 ${percentile(xs, 95).toFixed(1)}  max ${xs.at(-1).toFixed(1)}  (n ${xs.length})`;
    };
    log(`${mode}: client ${fmt(client)}`);
    for (const [k, xs] of phases) log(`  ${k.padEnd(14)} ${fmt(xs)}`);
    for (const [k, xs] of Object.entries(embedderSide)) if (xs.length) log(`  embedder ${k.padEnd(6)} ${fmt(xs)}`);
  }
} finally {
  await srv.stop();
  rmSync(copy, { recursive: true, force: true });
  base?.cleanup();
}
process.exit(0);
