// Counts the disk syncs (fsync/fdatasync) and writes workerd makes while 8 clients send observations into one
// session (bench-only tool, not part of `npm run bench`): a commit's price locally is mostly its sync.
// Usage: node bench/pipeline/syscalls.mjs [requests] [path]  (needs strace)
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { freePort, mintDevToken, startDevServer } from '../../scripts/dev-server.mjs';

const N = Number(process.argv[2] ?? 800);
const route = process.argv[3] ?? '/api/sessions/observations';
const secret = `sys-${Math.random().toString(36).slice(2)}`;
const srv = await startDevServer({
  snapshot: true,
  port: await freePort(),
  timeoutMs: 300_000,
  vars: {
    CAIRN_ADMIN_SECRET: secret,
    OBSERVER_PROVIDER: 'heuristic',
    RATE_LIMIT_READ_PER_MIN: '10000000',
    RATE_LIMIT_INGEST_PER_MIN: '10000000',
  },
});
const token = await mintDevToken(srv.url, secret, { team: 'bench', user: 'bencher', device: 'bench-box' });
let seq = 0;
const RESPONSE = Array.from({ length: 40 }, (_, i) => `src/module-${i}.ts: ok (${i * 7} ms)`).join('\n');
const body = () => {
  const n = ++seq;
  return route === '/api/sessions/observations'
    ? {
        event_id: `sys-${process.pid}-${n}`,
        session_id: 'sys-session',
        project: 'github.com/bench/pipeline',
        cwd: '/home/bench/pipeline',
        occurred_at: Date.now(),
        tool_name: 'Bash',
        tool_input: { command: `npm test -- --shard ${n}`, description: 'Run one shard' },
        tool_response: { stdout: RESPONSE, stderr: '', exit_code: 0 },
        tool_use_id: `toolu_${n}`,
      }
    : {};
};
const post = () =>
  fetch(`${srv.url}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body()),
  });
async function load(total) {
  let next = 0;
  const t0 = performance.now();
  const times = [];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (;;) {
        if (next++ >= total) return;
        const t = performance.now();
        const r = await post();
        await r.text();
        if (r.status >= 300) throw new Error(`${r.status}`);
        times.push(performance.now() - t);
      }
    }),
  );
  times.sort((a, b) => a - b);
  return { perSecond: total / ((performance.now() - t0) / 1000), p50: times[Math.floor(times.length / 2)] };
}
const descendants = (pid) => {
  // ps exits 1 when a process has no children.
  const kids = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
    .stdout.split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
  return [pid, ...kids.flatMap((k) => descendants(Number(k)))];
};
try {
  await load(100);
  const workerd = descendants(srv.child.pid).find((p) =>
    execFileSync('ps', ['-o', 'comm=', '-p', String(p)], { encoding: 'utf8' }).includes('workerd'),
  );
  const tracer = spawn('strace', ['-f', '-c', '-e', 'trace=fsync,fdatasync,pwrite64,write', '-p', String(workerd)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let out = '';
  tracer.stderr.on('data', (d) => (out += d));
  await new Promise((r) => setTimeout(r, 1000));
  const stats = await load(N);
  // Let the observer's turns for these events finish inside the traced window too.
  await new Promise((r) => setTimeout(r, 3000));
  tracer.kill('SIGINT');
  await new Promise((r) => tracer.on('exit', r));
  console.log(route, stats);
  for (const line of out.split('\n')) {
    const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$/.exec(line);
    if (m) console.log(`${m[2].padEnd(10)} ${m[1].padStart(7)} calls  ${(Number(m[1]) / N).toFixed(2)} per request`);
  }
} finally {
  await srv.stop();
}
