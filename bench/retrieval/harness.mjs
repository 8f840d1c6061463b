// Shared by the recall benchmarks: a throwaway wrangler dev, seeding through the local-only bench routes,
// latency sampling, and rewriting one marked section of BENCHMARKS.md.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { ROOT, mintDevToken, startDevServer } from '../../scripts/dev-server.mjs';

export const BENCHMARKS = path.join(ROOT, 'BENCHMARKS.md');

/**
 * Starts a snapshot wrangler dev on a fresh local database with generous rate limits; returns {url, token, stop}.
 * `root` bundles another checkout (see bench/baseline.mjs) instead of this one; `embedder` also starts the local
 * sentence model, as `npm start` does (without it local search is keyword search); `persistTo` keeps the
 * database in that folder instead of the snapshot's own (so a seeded one can be served again).
 */
export async function startBenchServer(port, vars = {}, { root, embedder = false, persistTo } = {}) {
  const secret = `bench-${Math.random().toString(36).slice(2)}`;
  const server = await startDevServer({
    root,
    port,
    embedder,
    snapshot: true,
    persistTo,
    timeoutMs: 300_000,
    vars: {
      CAIRN_ADMIN_SECRET: secret,
      RATE_LIMIT_READ_PER_MIN: '10000000',
      RATE_LIMIT_INGEST_PER_MIN: '10000000',
      ...vars,
    },
  });
  const token = await mintDevToken(server.url, secret, { team: 'bench', user: 'bencher', device: 'bench-box' });
  return { url: server.url, token, stop: server.stop };
}

export async function api(srv, method, pathAndQuery, body) {
  const send = () =>
    fetch(`${srv.url}${pathAndQuery}`, {
      method,
      headers: { authorization: `Bearer ${srv.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  let res;
  for (let attempt = 1; ; attempt++) {
    try {
      res = await send();
      break;
    } catch (err) {
      // A kept-alive connection the local server closed just as we reused it: safe to resend a GET.
      if (method !== 'GET' || attempt >= 3 || err?.cause?.code !== 'UND_ERR_SOCKET') throw err;
    }
  }
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${pathAndQuery} → ${res.status} ${text.slice(0, 300)}`);
  return text;
}

/** Seeds observations of one project in chunks of 1000; returns their ids in order. */
export async function seed(srv, project, session, observations) {
  const ids = [];
  for (let i = 0; i < observations.length; i += 1000) {
    const out = JSON.parse(
      await api(srv, 'POST', '/api/admin/bench/seed', {
        project,
        session,
        observations: observations.slice(i, i + 1000),
      }),
    );
    ids.push(...out.ids);
  }
  return ids;
}

/** Runs the vector backfill until nothing is missing. */
export async function backfillAll(srv) {
  let total = 0;
  for (;;) {
    const out = JSON.parse(await api(srv, 'POST', '/api/admin/backfill-vectors?limit=1000'));
    total += out.indexed;
    if (out.remaining === 0 || out.indexed === 0) return total;
  }
}

export const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];

/**
 * Times every case on every build in alternating rounds (build order flips each round, so drift in machine
 * load falls on both builds alike). Returns sorted latencies per `${build}|${case}`. A case is
 * `[name, path(query)]`, or `[name, path, {queries, warm}]` with its own queries and warm-up query (a case of
 * queries never sent before keeps its warm-up out of its list).
 */
export async function timeAlternating(builds, cases, queries, n, rounds = 5) {
  const times = new Map();
  for (const b of builds) for (const [, path, own] of cases) await api(b.srv, 'GET', path(own?.warm ?? queries[0])); // warm
  for (let r = 0; r < rounds; r++) {
    for (const b of r % 2 ? [...builds].reverse() : builds) {
      for (const [name, path, own] of cases) {
        const key = `${b.name}|${name}`;
        const list = own?.queries ?? queries;
        if (!times.has(key)) times.set(key, []);
        for (let i = 0; i < n / rounds; i++) {
          const t = performance.now();
          await api(b.srv, 'GET', path(list[(r * n + i) % list.length]));
          times.get(key).push(performance.now() - t);
        }
      }
    }
  }
  for (const xs of times.values()) xs.sort((x, y) => x - y);
  return times;
}

/** Times `n` sequential calls of `fn(i)` after `warm` unmeasured ones; returns {p50, p95, mean} in ms. */
export async function sample(n, fn, warm = 5) {
  for (let i = 0; i < warm; i++) await fn(i);
  const times = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn(i);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return {
    p50: percentile(times, 50),
    p95: percentile(times, 95),
    mean: times.reduce((s, x) => s + x, 0) / times.length,
  };
}

/** Replaces the text between `<!-- name:start -->` and `<!-- name:end -->` (appending the section if absent). */
export function writeSection(name, markdown) {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  let doc = existsSync(BENCHMARKS) ? readFileSync(BENCHMARKS, 'utf8') : '# Benchmarks\n';
  const block = `${start}\n${markdown.trim()}\n${end}`;
  const a = doc.indexOf(start);
  const b = doc.indexOf(end);
  doc = a >= 0 && b > a ? doc.slice(0, a) + block + doc.slice(b + end.length) : `${doc.trimEnd()}\n\n${block}\n`;
  writeFileSync(BENCHMARKS, doc);
}

/** A deterministic PRNG (mulberry32) so every run seeds the same data. */
export function rng(seedValue) {
  let a = seedValue >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
