// `cairn import --ndjson` at speed (issue 35), before/after in one run. Each measured import gets a snapshot
// wrangler dev of its own (npm start's shape: the local sentence model on unless BENCH_IMPORT_EMBEDDER=off), a fresh
// database, an importing team and a bystander team. The bystander holds a few dozen embedded observations and
// searches them (hybrid search: FTS plus the sentence model's query vector) every 550 ms (under its token's read
// limit) while the import runs; the import is the build's own client (`<build>/hooks-client/dist/cairn.mjs import
// --ndjson`, a child process), so its waits between parts are measured too. Runs:
//   1. the baseline (BENCH_IMPORT_BASELINE, default d420005: the import job embedded each part before the client
//      sent the next) with BENCH_IMPORT_SMALL observations (default 600: 1,105 lines, the size of issue 35's first
//      file, 78-81 s there);
//   2. this checkout, the same file; 1 and 2 alternate BENCH_IMPORT_ROUNDS times (default 2);
//   3. this checkout with BENCH_IMPORT_LARGE observations (default 30,000, the goal: ≤ 5 minutes), followed by
//      BENCH_IMPORT_TAIL_S seconds (default 60) of the bystander while the embed job catches up.
// Runs 1 and 2 raise the read limit (RATE_LIMIT_READ_PER_MIN) so that the baseline client's job polls (every 300 ms,
// 200 a minute) are not refused: with the default 120 a minute it stops after about a minute ("lost the job …
// 429"). Run 3 keeps the default limit, so it includes this client's own pacing (it leaves a quarter of the limit
// to the token's sessions). Per run: wall seconds, records (lines) and observations a second, seconds a part (p50,
// max), the bystander's searches (n, p50, p95, p99, max, over 2 s, errors). Writes the "import-speed" section of
// BENCHMARKS.md. Exits 1 when an import fails or the large one misses its goals.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import path from 'node:path';
import { mintDevToken, ROOT, startDevServer } from '../scripts/dev-server.mjs';
import { checkoutBaseline, freePort } from './baseline.mjs';
import { rng, writeSection } from './retrieval/harness.mjs';

const BASELINE = process.env.BENCH_IMPORT_BASELINE ?? 'd420005';
const SMALL = Number(process.env.BENCH_IMPORT_SMALL ?? 600);
/** Rounds of before/after with the small file, alternating (load on a shared machine drifts). */
const ROUNDS = Number(process.env.BENCH_IMPORT_ROUNDS ?? 2);
const LARGE = Number(process.env.BENCH_IMPORT_LARGE ?? 30_000);
const TAIL_MS = Number(process.env.BENCH_IMPORT_TAIL_S ?? 60) * 1000;
const EMBEDDER = process.env.BENCH_IMPORT_EMBEDDER !== 'off';
const ONLY = process.env.BENCH_IMPORT_ONLY ?? 'all'; // all | small | large
const GOAL_S = 300;
const BOUND_MS = 2_000;
const SEARCH_EVERY_MS = 550;
const SECRET = 'import-speed-secret';
const RAISED_READ_LIMIT = '100000';
const log = (...a) => console.log(new Date().toISOString().slice(11, 19), ...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const WORDS = (
  'cache key locale build worker queue retry lease alarm shard index vector token session prompt summary ' +
  'schema migration trigger export import budget statement batch cursor step gate move search ranking ' +
  'redaction fence policy tombstone history signal review held release device install hook sender spool'
).split(' ');

/**
 * A team's export as `cairn export` writes it: one project, sessions of 10 prompts with 2–3 observations and a
 * summary each (about 0.54 observations a line, the mix of issue 35's files). Deterministic.
 */
export function exportFile(observations, tag, user = 'owner') {
  const rand = rng(observations);
  const pick = (n) => Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');
  const T0 = Date.parse('2026-05-04T09:00:00Z');
  const key = `github.com/bench/${tag}`;
  const out = [{ kind: 'project', key, visibility: 'team', owner: null, created_at: T0 }];
  let o = 0;
  for (let s = 0; o < observations; s++) {
    const sk = `${tag}-s${s}`;
    const at = T0 + s * 3_600_000;
    out.push({
      kind: 'session',
      session_key: sk,
      project: key,
      user,
      platform: 'claude-code',
      prompt_count: 10,
      started_at: at,
      ended_at: at + 3_000_000,
    });
    for (let p = 1; p <= 10; p++) {
      const row = { session_key: sk, prompt_number: p, prompt_id: null, author: user, created_at: at + p * 60_000 };
      out.push({ kind: 'prompt', ...row, text: `Please look at the ${pick(3)} in module ${s}.${p} and fix it` });
      for (let k = 0; k < (p % 2 ? 3 : 2) && o < observations; k++, o++) {
        out.push({
          kind: 'observation',
          ...row,
          type: ['discovery', 'bugfix', 'feature', 'decision', 'change'][o % 5],
          title: `The ${pick(2)} of ${tag} ${o} needs the ${pick(1)}`,
          subtitle: `found while reading ${pick(2)}`,
          facts: [`${pick(4)} is built in src/${pick(1)}/${o % 50}.ts`, `${pick(5)} is missing from it`],
          narrative: `Observation ${o}: ${pick(40)}. Adding the ${pick(2)} fixes it; ${pick(20)}.`,
          concepts: [pick(1), pick(1)],
          files_read: [`src/${pick(1)}/${o % 50}.ts`],
          files_modified: o % 3 ? [] : [`src/${pick(1)}/${o % 50}.ts`],
          discovery_tokens: 120,
          content_hash: `${tag}-o${o}`,
          agent_id: null,
          agent_type: null,
          source: 'observer',
        });
      }
      out.push({
        kind: 'summary',
        ...row,
        request: `Fix the ${pick(2)} in ${s}.${p}`,
        investigated: pick(8),
        learned: pick(10),
        completed: pick(6),
        next_steps: pick(4),
        notes: '',
        content_hash: `${tag}-m${s}-${p}`,
      });
    }
  }
  return { text: `${out.map((r) => JSON.stringify(r)).join('\n')}\n`, lines: out.length };
}

/**
 * One request, timed. Every call here may be sent twice (searches, reads, the idempotent import and backfill): a
 * kept-alive socket that wrangler dev closed while idle fails at once ("other side closed", before the server saw
 * anything) and is sent again once on a new one, the time of both counted.
 */
async function api(url, token, method, route, body, ndjson = false) {
  const t0 = performance.now();
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(`${url}${route}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': ndjson ? 'application/x-ndjson' : 'application/json' }),
        },
        body: body === undefined ? undefined : ndjson ? body : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, text, ms: performance.now() - t0, resent: attempt > 1 };
    } catch (e) {
      if (attempt >= 2 || e?.cause?.code !== 'UND_ERR_SOCKET') throw e;
    }
  }
}

/** The bystander's memory: a small import, every record embedded before the measured import starts. */
async function seedBystander(url, token) {
  const { text } = exportFile(24, 'bystander', 'carol');
  const r = await api(url, token, 'POST', '/api/admin/import', text, true);
  if (r.status === 202) {
    const id = JSON.parse(r.text).job.id;
    for (;;) {
      const j = JSON.parse((await api(url, token, 'GET', `/api/jobs/${id}`)).text).job;
      if (j.status === 'done') break;
      if (j.status === 'failed') throw new Error(`bystander seed: ${JSON.stringify(j.error)}`);
      await sleep(300);
    }
  } else if (r.status !== 200) throw new Error(`bystander seed: ${r.status} ${r.text}`);
  for (let i = 0; i < 200; i++) {
    const b = await api(url, token, 'POST', '/api/admin/backfill-vectors?limit=20');
    if (b.status !== 200) throw new Error(`bystander backfill: ${b.status} ${b.text}`);
    if (JSON.parse(b.text).remaining === 0) return;
  }
}

/**
 * Searches as the bystander every SEARCH_EVERY_MS until `stop()`; the latencies by phase. It runs in a worker thread:
 * the sentence model computes in this process's main thread (scripts/sentence-embedder.mjs), and a search timed on
 * a blocked event loop would measure the model's batch, not the server.
 */
function bystander(url, token) {
  const worker = new Worker(new URL(import.meta.url), { workerData: { url, token } });
  const done = new Promise((resolve, reject) => {
    worker.on('message', (m) => m.samples && resolve(m.samples));
    worker.on('error', reject);
  });
  return {
    setPhase: (phase) => worker.postMessage({ phase }),
    stop: async () => {
      worker.postMessage({ stop: true });
      const samples = await done;
      await worker.terminate();
      return samples;
    },
  };
}

/** The bystander's loop, in its worker thread. */
async function searchLoop({ url, token }) {
  const samples = [];
  let phase = 'import';
  let running = true;
  parentPort.on('message', (m) => {
    if (m.phase) phase = m.phase;
    if (m.stop) running = false;
  });
  for (let i = 0; running; i++) {
    const started = performance.now();
    const q = ['cache locale', 'retry lease', 'vector index', 'schema trigger', 'redaction policy'][i % 5];
    try {
      const r = await api(url, token, 'GET', `/api/search?q=${encodeURIComponent(q)}&limit=10`);
      samples.push({ phase, ms: r.ms, status: r.status, ...(r.status === 200 ? {} : { error: r.text.slice(0, 200) }) });
    } catch (e) {
      samples.push({ phase, ms: performance.now() - started, status: 0, error: String(e?.cause ?? e) });
    }
    await sleep(Math.max(0, SEARCH_EVERY_MS - (performance.now() - started)));
  }
  parentPort.postMessage({ samples });
}

const pct = (xs, p) =>
  xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)] : 0;
function stats(samples) {
  const ms = samples.map((s) => s.ms);
  return {
    n: ms.length,
    p50: pct(ms, 50),
    p95: pct(ms, 95),
    p99: pct(ms, 99),
    max: Math.max(0, ...ms),
    over: ms.filter((m) => m > BOUND_MS).length,
    errors: samples.filter((s) => s.status !== 200).length,
    statuses: [...new Set(samples.filter((s) => s.status !== 200).map((s) => `${s.status} ${s.error ?? ''}`))],
  };
}

/** Runs the build's own client on `file`; wall seconds, exit code, the seconds each part took, its output. */
function runClient(root, url, token, file) {
  const home = mkdtempSync(path.join(tmpdir(), 'cairn-import-home-'));
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [path.join(root, 'hooks-client', 'dist', 'cairn.mjs'), 'import', '--ndjson', file],
    {
      env: {
        ...process.env,
        HOME: home,
        XDG_CONFIG_HOME: home,
        XDG_STATE_HOME: home,
        CAIRN_URL: url,
        CAIRN_TOKEN: token,
        CAIRN_DEVICE: 'bench',
      },
    },
  );
  let out = '';
  let err = '';
  const parts = [];
  let last = t0;
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => {
    err += d;
    // A part's end: the bar line without a phase after it (both clients print one per part when not on a terminal).
    for (const line of String(d).split('\n'))
      if (/^cairn: \[[#-]+\] \d+% [\d,]+\/[\d,]+ records$/.test(line.trim())) {
        const now = performance.now();
        parts.push((now - last) / 1000);
        last = now;
      }
  });
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      rmSync(home, { recursive: true, force: true });
      resolve({ code, seconds: (performance.now() - t0) / 1000, parts, out, err });
    }),
  );
}

async function measure({ root, label, observations, vars = {}, tailMs = 0 }) {
  const port = await freePort();
  log(label, ': starting wrangler dev on', port, EMBEDDER ? '(sentence model on)' : '(sentence model off)');
  const srv = await startDevServer({
    root,
    port,
    snapshot: true,
    embedder: EMBEDDER,
    timeoutMs: 300_000,
    vars: { CAIRN_ADMIN_SECRET: SECRET, ...vars },
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-import-bench-'));
  try {
    const importer = await mintDevToken(srv.url, SECRET, { team: 'importer', user: 'owner', device: 'box' });
    const watcher = await mintDevToken(srv.url, SECRET, { team: 'bystanders', user: 'carol', device: 'carol-box' });
    await seedBystander(srv.url, watcher);
    const { text, lines } = exportFile(observations, 'imported', 'owner');
    const file = path.join(dir, 'team.ndjson');
    writeFileSync(file, text);
    const by = bystander(srv.url, watcher);
    await sleep(3 * SEARCH_EVERY_MS);
    log(label, `: importing ${lines} lines (${observations} observations)`);
    const run = await runClient(root, srv.url, importer, file);
    // Searchable by keyword the moment the client ends (every title holds the word "imported").
    const hits = await api(srv.url, importer, 'GET', `/api/search?q=imported&mode=fts&limit=5`);
    const found = hits.status === 200 ? (JSON.parse(hits.text).total ?? null) : null;
    let tail = null;
    if (tailMs > 0 && run.code === 0) {
      by.setPhase('embed');
      await sleep(tailMs);
      const jobs = JSON.parse((await api(srv.url, importer, 'GET', '/api/admin/jobs?kind=embed&limit=1')).text).jobs;
      tail = jobs[0] ?? null;
    }
    const samples = await by.stop();
    const stored = /new .*?(\d+) observations/.exec(run.out)?.[1];
    const result = {
      label,
      observations,
      lines,
      code: run.code,
      seconds: run.seconds,
      perPart: { p50: pct(run.parts, 50), max: Math.max(0, ...run.parts), n: run.parts.length },
      stored: stored === undefined ? null : Number(stored),
      found,
      during: stats(samples.filter((s) => s.phase === 'import')),
      embed: tail ? { ...stats(samples.filter((s) => s.phase === 'embed')), job: tail } : null,
      tailOfErr: run.code === 0 ? '' : run.err.slice(-600),
    };
    log(
      label,
      JSON.stringify({ ...result, embed: result.embed && { ...result.embed, job: result.embed.job.progress } }),
    );
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await srv.stop();
  }
}

const f1 = (n) => n.toFixed(1);
const rate = (r, what) => (r.code === 0 ? f1(what / r.seconds) : '–');
const row = (r) =>
  `| ${r.label} | ${r.observations.toLocaleString('en')} obs, ${r.lines.toLocaleString('en')} lines | ${r.code === 0 ? f1(r.seconds) : `failed (${r.code})`} | ${rate(r, r.lines)} | ${rate(r, r.observations)} | ${f1(r.perPart.p50)} / ${f1(r.perPart.max)} | ${r.during.n} | ${Math.round(r.during.p50)} | ${Math.round(r.during.p95)} | ${Math.round(r.during.p99)} | ${Math.round(r.during.max)} | ${r.during.over} | ${r.during.errors} |`;

async function main() {
  const results = [];
  if (ONLY !== 'large') {
    const base = checkoutBaseline(BASELINE);
    try {
      for (let round = 1; round <= ROUNDS; round++) {
        const vars = { RATE_LIMIT_READ_PER_MIN: RAISED_READ_LIMIT };
        const tag = ROUNDS > 1 ? ` #${round}` : '';
        results.push(
          await measure({ root: base.root, label: `before (${base.commit})${tag}`, observations: SMALL, vars }),
        );
        results.push(await measure({ root: ROOT, label: `after${tag}`, observations: SMALL, vars }));
      }
    } finally {
      base.cleanup();
    }
  }
  let large = null;
  if (ONLY !== 'small') {
    large = await measure({ root: ROOT, label: 'after, default read limit', observations: LARGE, tailMs: TAIL_MS });
    results.push(large);
  }
  const pairs = [];
  for (let i = 0; i + 1 < results.length && results[i].label.startsWith('before'); i += 2)
    if (results[i].code === 0 && results[i + 1].code === 0) pairs.push(results[i].seconds / results[i + 1].seconds);
  const e = large?.embed;
  writeSection(
    'import-speed',
    `
## Import at speed (\`npm run bench import-speed\` → bench/import-speed.bench.mjs)

\`cairn import --ndjson\` of a team's export (sessions of 10 prompts, 2–3 observations and a summary each: ~0.55
observations a line), the build's own client against a snapshot wrangler dev of its own with the local sentence model
${EMBEDDER ? 'on' : 'off'}; load average ${loadavg()[0].toFixed(1)} at the end (a shared 2-core machine: compare rows of one run). A bystander
team searches its own memory (hybrid: FTS and the sentence model's query vector) every ${SEARCH_EVERY_MS} ms during the
import. "before" and "after" alternate ${ROUNDS} time(s) with the same ${SMALL.toLocaleString('en')}-observation file and the read limit raised (the baseline client polls
its part's job every 300 ms and stops after about a minute at the default 120 reads a minute); the last row is the goal's
${LARGE.toLocaleString('en')} observations at the default limit, this client pacing itself to leave a quarter of it to the token's sessions.

| run | file | seconds | records/s | observations/s | s a part (p50 / max) | bystander searches | p50 ms | p95 ms | p99 ms | max ms | over 2 s | errors |
|---|---|---|---|---|---|---|---|---|---|---|---|---|
${results.map(row).join('\n')}

${pairs.length ? `Same file, back to back: **${pairs.map((x) => `${f1(x)}×`).join(', ')} the records a second** (before ÷ after seconds, each round). ` : ''}${
  large
    ? `${LARGE.toLocaleString('en')} observations: ${large.code === 0 ? `**${f1(large.seconds)} s**` : 'failed'} (goal ≤ ${GOAL_S} s), bystander p99 ${Math.round(large.during.p99)} ms (goal ≤ ${BOUND_MS} ms).`
    : ''
}${
  e
    ? ` In the ${TAIL_MS / 1000} s after it, while the team's embed job caught up (${e.job.progress.done.toLocaleString('en')} of ${(e.job.progress.total ?? 0).toLocaleString('en')} records embedded by then, ${e.job.status}), the bystander's searches: n ${e.n}, p50 ${Math.round(e.p50)} ms, p99 ${Math.round(e.p99)} ms, max ${Math.round(e.max)} ms, ${e.over} over 2 s.`
    : ''
}
Observations stored (the client's count) and keyword hits for a word of every title the moment the client ended: ${results.map((r) => `${r.label} ${r.stored ?? '?'} / ${r.found ?? '?'}`).join(', ')}.
`,
  );
  if (results.some((r) => r.code !== 0)) process.exitCode = 1;
  if (large && (large.seconds > GOAL_S || large.during.p99 > BOUND_MS)) process.exitCode = 1;
}

if (isMainThread)
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
else void searchLoop(workerData);
