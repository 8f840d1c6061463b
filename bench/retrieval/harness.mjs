// Shared by the recall benchmarks: a throwaway wrangler dev, seeding through the local-only bench routes,
// latency sampling, and rewriting one marked section of BENCHMARKS.md.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { QUIET_ENV, ROOT, mintDevToken } from '../../scripts/dev-server.mjs';

const WRANGLER = path.join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js');

function wrangler(args, cwd) {
  const r = spawnSync(process.execPath, [WRANGLER, ...args], { cwd, encoding: 'utf8', env: { ...process.env, ...QUIET_ENV } });
  if (r.status !== 0) throw new Error(`wrangler ${args.join(' ')} failed:\n${r.stdout}\n${r.stderr}`);
}

/**
 * Bundles the Worker once into a temp dir and serves that snapshot: wrangler dev watches its sources, and
 * in a shared checkout someone else's save would restart the Worker in the middle of a measurement.
 */
async function startSnapshotServer(dir, port, vars) {
  wrangler(['deploy', '--dry-run', '--outdir', path.join(dir, 'dist')], ROOT);
  const toml = readFileSync(path.join(ROOT, 'wrangler.toml'), 'utf8')
    .replace(/^main = .*$/m, 'main = "dist/index.js"')
    .replace(/^migrations_dir = .*$/m, `migrations_dir = ${JSON.stringify(path.join(ROOT, 'migrations'))}`);
  writeFileSync(path.join(dir, 'wrangler.toml'), toml);
  const persist = path.join(dir, 'state');
  wrangler(['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', persist], dir);
  const args = [WRANGLER, 'dev', '--local', '--ip', '127.0.0.1', '--port', String(port), '--persist-to', persist, '--show-interactive-dev-session=false', '--log-level', 'warn'];
  for (const [k, v] of Object.entries({ CAIRN_LOCAL: '1', ...vars })) args.push('--var', `${k}:${v}`);
  const child = spawn(process.execPath, args, { cwd: dir, stdio: 'pipe', env: { ...process.env, ...QUIET_ENV } });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      throw new Error(`wrangler dev did not become ready:\n${output}`);
    }
    try {
      if ((await fetch(`${url}/api/health`)).ok) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve(undefined);
      child.once('exit', () => resolve(undefined));
      child.kill('SIGTERM');
      setTimeout(() => child.exitCode === null && child.kill('SIGKILL'), 3000).unref();
    });
  return { url, stop };
}

export const BENCHMARKS = path.join(ROOT, 'BENCHMARKS.md');

/** Starts wrangler dev on a fresh local database; returns {url, token, stop}. */
export async function startBenchServer(port) {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-bench-'));
  const secret = `bench-${Math.random().toString(36).slice(2)}`;
  const server = await startSnapshotServer(dir, port, { CAIRN_ADMIN_SECRET: secret, RATE_LIMIT_READ_PER_MIN: '10000000', RATE_LIMIT_INGEST_PER_MIN: '10000000' });
  const token = await mintDevToken(server.url, secret, { team: 'bench', user: 'bencher', device: 'bench-box' });
  return {
    url: server.url,
    token,
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function api(srv, method, pathAndQuery, body) {
  const res = await fetch(`${srv.url}${pathAndQuery}`, {
    method,
    headers: { authorization: `Bearer ${srv.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${pathAndQuery} → ${res.status} ${text.slice(0, 300)}`);
  return text;
}

/** Seeds observations of one project in chunks of 1000; returns their ids in order. */
export async function seed(srv, project, session, observations) {
  const ids = [];
  for (let i = 0; i < observations.length; i += 1000) {
    const out = JSON.parse(await api(srv, 'POST', '/api/admin/bench/seed', { project, session, observations: observations.slice(i, i + 1000) }));
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

export const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];

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
  return { p50: percentile(times, 50), p95: percentile(times, 95), mean: times.reduce((s, x) => s + x, 0) / times.length };
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
