// What cairn costs inside a Claude Code session, per call, beside `node -e 0` measured in the same run
// (interleaved): the status line (`cairn statusline`, run by Claude Code on every refresh) answering from its
// cache (the usual refresh: no network) and asking the server (at most once in 30 s). The server is a stub
// in its own process that answers at once, so the rows measure the client. Writes the "in-session" section.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildClient } from '../hooks-client/build.mjs';
import { percentile, writeSection } from './retrieval/harness.mjs';

const N = Number(process.env.BENCH_SAMPLES ?? 40);
const CLIENT = path.resolve('hooks-client/dist/cairn.cjs');
await buildClient({ quiet: true });

const stub = spawn(
  process.execPath,
  [
    '-e',
    `require('node:http').createServer((q, s) => { q.resume(); q.on('end', () => {
  s.writeHead(200, { 'content-type': 'application/json' });
  s.end(q.url.startsWith('/api/observer/state') ? '{"state":"ok","code":null,"notice":null}' : '{"observations":12,"summarized":true,"text":""}'); }); }).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const port = await new Promise((resolve) => stub.stdout.once('data', (d) => resolve(Number(String(d).trim()))));

const home = mkdtempSync(path.join(tmpdir(), 'cairn-bench-home-'));
mkdirSync(path.join(home, '.config', 'cairn'), { recursive: true });
writeFileSync(
  path.join(home, '.config', 'cairn', 'config.json'),
  JSON.stringify({ url: `http://127.0.0.1:${port}`, token: 'bench-token' }),
);
const CPU_PRELOAD = path.join(mkdtempSync(path.join(tmpdir(), 'cairn-bench-cpu-')), 'cpu.cjs');
writeFileSync(
  CPU_PRELOAD,
  "process.on('exit', () => { try { const u = process.cpuUsage(); require('fs').writeSync(3, String((u.user + u.system) / 1000)); } catch {} });\n",
);
const env = {
  PATH: `${path.dirname(process.execPath)}:${process.env.PATH}`,
  HOME: home,
  NODE_OPTIONS: `--require ${CPU_PRELOAD}`,
};

function time(args, input = '') {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, {
    input,
    env,
    cwd: home,
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
  });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { ms, cpu: Number(r.output[3]) || NaN, stdout: r.stdout };
}

const statusInput = JSON.stringify({
  session_id: 'bench-status',
  cwd: home,
  workspace: { current_dir: home },
  model: { id: 'x', display_name: 'X' },
});
const cacheFile = path.join(home, '.local', 'state', 'cairn', 'statusline.json');
const rows = { baseline: [], cached: [], asking: [] };
// Warm-up: V8's code cache written by a hook run, the state dir made, the cache filled.
time([CLIENT, 'statusline'], statusInput);
let sample = '';
for (let i = 0; i < N; i++) {
  rows.baseline.push(time(['-e', '0']));
  const c = time([CLIENT, 'statusline'], statusInput);
  sample = c.stdout.trim();
  rows.cached.push(c);
  // A cache 31 s old: this refresh asks the server (both questions in parallel) and writes the cache.
  writeFileSync(cacheFile, JSON.stringify({ observer: null, sessions: {}, askedAt: Date.now() - 31_000 }));
  rows.asking.push(time([CLIENT, 'statusline'], statusInput));
}
stub.kill();

const sorted = (xs, k) => xs.map((x) => x[k]).sort((a, b) => a - b);
const med = (xs, k) => percentile(sorted(xs, k), 50);
const p95 = (xs, k) => percentile(sorted(xs, k), 95);
const line = (name, xs) =>
  `| ${name} | ${med(xs, 'ms').toFixed(1)} | ${p95(xs, 'ms').toFixed(1)} | ${med(xs, 'cpu').toFixed(1)} | ${(med(xs, 'ms') / med(rows.baseline, 'ms')).toFixed(2)}× | ${(med(xs, 'cpu') / med(rows.baseline, 'cpu')).toFixed(2)}× |`;
const md = `## In the session: the status line (\`npm run bench in-session\` → bench/in-session.bench.mjs)

${new Date().toISOString().slice(0, 10)}, ${N} samples each, interleaved with \`node -e 0\` in the same run, on this shared 2-core machine (load
average ${(await import('node:os')).loadavg()[0].toFixed(0)} at the end of the run: read the ratios, not the milliseconds).
Each row is one process as Claude Code starts it (wall ms from spawn to exit; CPU = user + sys ms of the process).
The status line answers from its cache on every refresh but one in 30 s; that one asks a stub server on
127.0.0.1 (observer state and this session's count, in parallel).

| call | wall p50 ms | wall p95 ms | CPU p50 ms | wall vs node -e 0 | CPU vs node -e 0 |
|---|---|---|---|---|---|
${line('node -e 0 (baseline)', rows.baseline)}
${line('cairn statusline, cached (most refreshes)', rows.cached)}
${line('cairn statusline, asking the server (≤ 1 in 30 s)', rows.asking)}

Output: \`${sample}\`
`;
writeSection('in-session', md);
console.log(md);
