// CPU profile of workerd while 8 clients send observations into one session (bench-only tool, not part of
// `npm run bench`): starts a snapshot wrangler dev, attaches to its inspector (Chrome DevTools protocol),
// samples while the load runs, and prints self time per function mapped back to src/ through the bundle's
// source map. Usage: node bench/pipeline/profile.mjs [requests] [path]
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';
import { TraceMap, originalPositionFor } from '@jridgewell/trace-mapping';
import { freePort, mintDevToken, startDevServer } from '../../scripts/dev-server.mjs';

const N = Number(process.argv[2] ?? 800);
const route = process.argv[3] ?? '/api/sessions/observations';
const secret = `prof-${Math.random().toString(36).slice(2)}`;
const inspectorPort = await freePort();
const srv = await startDevServer({
  snapshot: true,
  port: await freePort(),
  inspectorPort,
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
        event_id: `prof-${process.pid}-${n}`,
        session_id: 'prof-session',
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
try {
  await load(100);
  const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json();
  const ws = new WebSocket(targets[0].webSocketDebuggerUrl);
  await new Promise((r, j) => {
    ws.once('open', r);
    ws.once('error', j);
  });
  let id = 0;
  const pending = new Map();
  ws.on('message', (m) => {
    const msg = JSON.parse(String(m));
    if (msg.id && pending.has(msg.id)) {
      pending.get(msg.id)(msg);
      pending.delete(msg.id);
    }
  });
  const send = (method, params = {}) =>
    new Promise((r) => {
      const i = ++id;
      pending.set(i, r);
      ws.send(JSON.stringify({ id: i, method, params }));
    });
  await send('Profiler.enable');
  await send('Profiler.setSamplingInterval', { interval: 200 });
  await send('Profiler.start');
  const stats = await load(N);
  const { result } = await send('Profiler.stop');
  ws.close();
  console.log(route, stats);
  report(result.profile);
} finally {
  await srv.stop();
}

function report(profile) {
  const dist = findBundle();
  const map = dist ? new TraceMap(readFileSync(dist + '.map', 'utf8')) : null;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  for (const n of profile.nodes) for (const c of n.children ?? []) byId.get(c).parent = n.id;
  const self = new Map();
  const dt = profile.timeDeltas;
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const n = byId.get(profile.samples[i]);
    const d = dt[i] ?? 0;
    total += d;
    const f = n.callFrame;
    let where = f.url ? `${path.basename(f.url)}:${f.lineNumber}` : '';
    if (map && f.url.endsWith('index.js') && f.lineNumber >= 0) {
      const o = originalPositionFor(map, { line: f.lineNumber + 1, column: f.columnNumber });
      if (o.source) where = `${o.source.replace(/^.*?(src|node_modules)\//, '$1/')}:${o.line}`;
    }
    let key = `${f.functionName || '(anon)'} ${where}`;
    // Native calls (SQL exec, storage) are charged to the JS function that made them, too.
    if (!f.url && n.parent !== undefined) key += ` <- ${frameName(byId.get(n.parent), map)}`;
    self.set(key, (self.get(key) ?? 0) + d);
  }
  console.log(`sampled ${(total / 1000).toFixed(0)} ms`);
  // Inclusive time under entry points: which job the isolate spent its time on.
  const entries = ['admit', 'alarm', 'fetch', 'ping'];
  const incl = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    let n = byId.get(profile.samples[i]);
    let job = n.callFrame.functionName === '(idle)' ? '(idle)' : 'other (async continuations, GC, program)';
    for (; n; n = byId.get(n.parent)) {
      const name = frameName(n, map);
      const hit = entries.find((e) => name.startsWith(`${e} `) && /src\/(session|index|limits)/.test(name));
      if (hit) job = name;
      else if (!entries.some((e) => job.startsWith(`${e} `)) && /src\/[a-z-]+\//.test(name))
        job = `under ${name.replace(/^.* (src\/[^:]+).*$/, '$1')}`;
      else if (job.startsWith('other') && /node_modules\/hono/.test(name)) job = 'under hono';
    }
    incl.set(job, (incl.get(job) ?? 0) + (dt[i] ?? 0));
  }
  for (const [k, v] of [...incl].sort((a, b) => b[1] - a[1]))
    console.log(`job ${((100 * v) / total).toFixed(1).padStart(5)} %  ${(v / 1000 / N).toFixed(2)} ms/request  ${k}`);
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 45))
    console.log(`${((100 * v) / total).toFixed(1).padStart(5)} %  ${(v / 1000).toFixed(0).padStart(6)} ms  ${k}`);
  // Self time grouped by source file.
  const byFile = new Map();
  for (const [k, v] of self) {
    const file = k.split(' ').slice(1).join(' ').replace(/:\d+$/, '') || k;
    byFile.set(file, (byFile.get(file) ?? 0) + v);
  }
  console.log('--- by file');
  for (const [k, v] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 30))
    console.log(`${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`);
}

function findBundle() {
  // The snapshot's bundle lives in the server's temp folder (its working directory; removed on stop).
  const f = path.join(readlinkSync(`/proc/${srv.child.pid}/cwd`), 'dist', 'index.js');
  return existsSync(f + '.map') ? f : null;
}

function frameName(n, map) {
  if (!n) return '?';
  const f = n.callFrame;
  let where = '';
  if (map && f.url.endsWith('index.js') && f.lineNumber >= 0) {
    const o = originalPositionFor(map, { line: f.lineNumber + 1, column: f.columnNumber });
    if (o.source) where = `${o.source.replace(/^.*?(src|node_modules)\//, '$1/')}:${o.line}`;
  }
  return `${f.functionName || '(anon)'} ${where}`;
}
