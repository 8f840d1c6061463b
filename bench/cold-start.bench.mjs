// Cold start: the production bundle (`wrangler deploy --dry-run`) of this tree and of a baseline commit, built
// in the same run. Size raw and gzip, and what V8 spends starting it: CPU time of importing the bundle (parse,
// compile, top-level evaluation) in a fresh Node process with `cloudflare:workers` stubbed, against an empty
// module — the part of a fresh isolate's start that the bundle decides (workerd runs the same V8). Interleaved
// rounds, medians. Writes the "cold-start" section of BENCHMARKS.md.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { ROOT } from '../scripts/dev-server.mjs';
import { checkoutBaseline } from './baseline.mjs';
import { writeSection } from './retrieval/harness.mjs';

const ROUNDS = Number(process.env.BENCH_COLD_ROUNDS ?? 15);
const log = (...a) => console.log(new Date().toISOString().slice(11, 19), ...a);
const work = mkdtempSync(path.join(tmpdir(), 'cairn-cold-'));
const STUB = path.join(work, 'cloudflare-workers.mjs');
writeFileSync(
  STUB,
  'export class DurableObject { constructor(ctx, env) { this.ctx = ctx; this.env = env; } }\nexport class WorkerEntrypoint extends DurableObject {}\nexport const env = {};\nexport const exports = {};\n',
);
const EMPTY = path.join(work, 'empty.mjs');
writeFileSync(EMPTY, 'export {};\n');

/** Builds the production bundle of `root` and a Node-loadable copy of it; returns sizes and the copy's path. */
function bundle(name, root) {
  const out = path.join(work, name);
  execFileSync(
    process.execPath,
    [path.join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js'), 'deploy', '--dry-run', '--outdir', out],
    {
      cwd: root,
      stdio: 'ignore',
      env: { ...process.env, CI: '1', WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false' },
    },
  );
  const code = readFileSync(path.join(out, 'index.js'));
  const loadable = path.join(work, `${name}.mjs`);
  writeFileSync(loadable, code.toString('utf8').replaceAll('"cloudflare:workers"', JSON.stringify(STUB)));
  return { name, raw: code.length, gzip: gzipSync(code).length, file: loadable };
}

function start(file) {
  const code = `const c = process.cpuUsage(); const w = performance.now(); await import(${JSON.stringify(file)}); const d = process.cpuUsage(c); console.log(JSON.stringify({ cpu: (d.user + d.system) / 1000, wall: performance.now() - w }));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

const base = checkoutBaseline();
try {
  log(`bundling ${base.commit} and this tree…`);
  const builds = [bundle(`before (${base.commit})`, base.root), bundle('after (this tree)', ROOT)];
  const empty = { name: 'empty module', file: EMPTY };
  const samples = new Map([empty, ...builds].map((b) => [b, []]));
  for (let i = 0; i < ROUNDS; i++) for (const b of samples.keys()) samples.get(b).push(start(b.file));
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const cpu = (b) => med(samples.get(b).map((s) => s.cpu));
  const wall = (b) => med(samples.get(b).map((s) => s.wall));
  const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;
  const rows = builds.map(
    (b) =>
      `| ${b.name} | ${kib(b.raw)} | ${kib(b.gzip)} | ${(cpu(b) - cpu(empty)).toFixed(0)} | ${(wall(b) - wall(empty)).toFixed(0)} |`,
  );
  log(rows.join('\n'));
  writeSection(
    'cold-start',
    [
      '## Cold start (`npm run bench` → bench/cold-start.bench.mjs)',
      '',
      `Production bundle (\`wrangler deploy --dry-run\`) of a baseline commit and of this tree, built in the same run. Start cost:`,
      'a fresh Node process importing the bundle (V8 parse, compile and top-level evaluation, `cloudflare:workers`',
      `stubbed), minus an empty module; CPU time measured inside the process; median of ${ROUNDS} interleaved rounds.`,
      '',
      '| build | raw | gzip | start CPU ms over an empty module | start wall ms over an empty module |',
      '|---|---|---|---|---|',
      ...rows,
      '',
      `Run at ${new Date().toISOString()} (Node ${process.version}).`,
    ].join('\n'),
  );
} finally {
  base.cleanup();
  rmSync(work, { recursive: true, force: true });
}
