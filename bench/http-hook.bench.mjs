// Per tool call, same run: PostToolUse as a command hook (a Node process per call: the quick path, which writes
// the inbox and leaves the rest to the background sender) against PostToolUse as Claude Code's HTTP hook (one
// POST of the same payload to the sender's door on 127.0.0.1, over a kept-alive connection as Claude Code's
// HTTP client keeps it). Two machines, each with its own running sender, calls interleaved in a new random order
// each round; an instant stub stands in for the cairn server so the rows measure the client side only. Writes the
// "http-hook" section of BENCHMARKS.md.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildClient } from '../hooks-client/build.mjs';
import { percentile, writeSection } from './retrieval/harness.mjs';

const N = Number(process.env.BENCH_SAMPLES ?? 60);
const CLIENT = path.resolve('hooks-client/dist/cairn.cjs');
await buildClient({ quiet: true });

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

// The instant stub (its own process: spawnSync below blocks this one). It counts the tool calls that arrived.
const stub = spawn(
  process.execPath,
  [
    '-e',
    `const seen = new Set(); require('node:http').createServer((q, s) => { let b = ''; q.on('data', (c) => (b += c)); q.on('end', () => {
  if (q.url === '/arrivals') { s.writeHead(200, { 'content-type': 'application/json' }); return s.end(JSON.stringify([...seen])); }
  let events = []; try { const j = JSON.parse(b); events = j.events ?? [j]; } catch {}
  for (const e of events) if (e.tool_use_id) seen.add(e.tool_use_id);
  s.writeHead(q.url === '/api/events/batch' ? 200 : 202, { 'content-type': 'application/json' });
  s.end(q.url === '/api/events/batch' ? JSON.stringify({ results: events.map((e) => ({ event_id: e.event_id, accepted: true, duplicate: false })) }) : '{"accepted":true,"duplicate":false}'); }); }).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
// Whatever happens, no process of this bench outlives it.
const children = [stub];
process.on('exit', () => {
  for (const c of children) c.kill('SIGTERM');
});
const stubUrl = `http://127.0.0.1:${await new Promise((resolve) => stub.stdout.once('data', (d) => resolve(Number(String(d).trim()))))}`;

const repo = mkdtempSync(path.join(tmpdir(), 'cairn-bench-repo-'));
execFileSync('git', ['init', '-q'], { cwd: repo });
execFileSync('git', ['remote', 'add', 'origin', 'git@github.com:bench/http-hook.git'], { cwd: repo });

// CPU (user + system) of each node process, written by itself at exit on fd 3 (same preload for every process).
const CPU_PRELOAD = path.join(mkdtempSync(path.join(tmpdir(), 'cairn-bench-cpu-')), 'cpu.cjs');
writeFileSync(
  CPU_PRELOAD,
  "process.on('exit', () => { try { const u = process.cpuUsage(); require('fs').writeSync(3, String((u.user + u.system) / 1000)); } catch {} });\n",
);

async function machine() {
  const home = mkdtempSync(path.join(tmpdir(), 'cairn-bench-home-'));
  mkdirSync(path.join(home, '.config', 'cairn'), { recursive: true });
  writeFileSync(path.join(home, '.config', 'cairn', 'config.json'), JSON.stringify({ url: stubUrl, token: 'bench' }));
  const env = {
    PATH: `${path.dirname(process.execPath)}:${process.env.PATH}`,
    HOME: home,
    CAIRN_SENDER_PORT: String(await freePort()),
    CAIRN_SENDER_IDLE_MS: '3600000',
  };
  // The secret and the hook exactly as `cairn install` writes them.
  const settings = path.join(home, 'settings.json');
  execFileSync(
    process.execPath,
    [CLIENT, 'install', '--client', CLIENT, '--no-mcp', '--no-statusline', '--settings', settings],
    { env: { ...env, PATH: '/nonexistent' }, cwd: repo },
  );
  const s = JSON.parse(readFileSync(settings, 'utf8'));
  const hook = s.hooks.PostToolUse[0].hooks[0];
  const headers = Object.fromEntries(
    Object.entries(hook.headers).map(([k, v]) => [k, v === '$CAIRN_SENDER_NONCE' ? s.env.CAIRN_SENDER_NONCE : '']),
  );
  const child = spawn(process.execPath, [CLIENT, 'sender'], {
    env: { ...env, NODE_OPTIONS: `--require ${CPU_PRELOAD}` },
    stdio: ['ignore', 'ignore', 'inherit', 'pipe'],
  });
  children.push(child);
  let cpu = '';
  child.stdio[3].on('data', (d) => (cpu += d));
  const exited = new Promise((resolve) => child.on('exit', () => resolve(Number(cpu))));
  return { home, env, url: hook.url, headers, events: 0, stopSender: () => (child.kill('SIGTERM'), exited) };
}

const command = await machine();
const http = await machine();
let seq = 0;
const payload = (id) =>
  JSON.stringify({
    session_id: 'bench-session',
    transcript_path: '/nonexistent.jsonl',
    cwd: repo,
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_use_id: id,
    tool_input: { command: 'npm test' },
    tool_response: { stdout: 'ok\n'.repeat(200), stderr: '', interrupted: false, isImage: false },
  });

/** Claude Code's command hook, exec form: spawn → exit of `node cairn.cjs hook post-tool-use`, its own CPU. */
function viaCommand() {
  const id = `cmd-${++seq}`;
  command.events++;
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [CLIENT, 'hook', 'post-tool-use'], {
    input: payload(id),
    env: { ...command.env, NODE_OPTIONS: `--require ${CPU_PRELOAD}` },
    cwd: repo,
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
  });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`hook exited ${r.status}: ${r.stderr}`);
  return { id, ms, cpu: Number(r.output[3]) };
}

/** `node -e 0` the same way: the start-up any process per call pays, for scale. */
function bareNode() {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, ['-e', '0'], {
    env: { ...command.env, NODE_OPTIONS: `--require ${CPU_PRELOAD}` },
    cwd: repo,
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
  });
  return { id: null, ms: Number(process.hrtime.bigint() - t) / 1e6, cpu: Number(r.output[3]) };
}

/** Claude Code's HTTP hook: one POST on a kept-alive connection, the client's CPU for it (this process). */
async function viaHttp() {
  const id = `http-${++seq}`;
  http.events++;
  const c = process.cpuUsage();
  const t = process.hrtime.bigint();
  const r = await fetch(http.url, {
    method: 'POST',
    body: payload(id),
    headers: { 'content-type': 'application/json', ...http.headers },
  });
  await r.arrayBuffer();
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  const u = process.cpuUsage(c);
  if (r.status !== 200) throw new Error(`POST answered ${r.status}`);
  return { id, ms, cpu: (u.user + u.system) / 1000 };
}

// The senders open their doors: wait until a POST is answered.
for (let i = 0; ; i++) {
  try {
    await viaHttp();
    break;
  } catch (e) {
    if (i > 100) throw e;
    await new Promise((r) => setTimeout(r, 100));
  }
}
const rows = { command: { ms: [], cpu: [] }, http: { ms: [], cpu: [] }, bare: { ms: [], cpu: [] } };
const ids = [];
for (let i = 0; i < N + 3; i++) {
  const order = ['command', 'http', 'bare']
    .map((w) => [Math.random(), w])
    .sort((a, b) => a[0] - b[0])
    .map(([, w]) => w);
  for (const which of order) {
    const r = which === 'command' ? viaCommand() : which === 'http' ? await viaHttp() : bareNode();
    if (r.id) ids.push(r.id);
    if (i >= 3) {
      rows[which].ms.push(r.ms);
      rows[which].cpu.push(r.cpu);
    }
  }
}
const pending = (home) => {
  const dir = path.join(home, '.local', 'state', 'cairn');
  const inbox = existsSync(path.join(dir, 'inbox'))
    ? readdirSync(path.join(dir, 'inbox')).filter((n) => !n.startsWith('.')).length
    : 0;
  const spool = existsSync(path.join(dir, 'spool.jsonl'))
    ? readFileSync(path.join(dir, 'spool.jsonl'), 'utf8').trim()
    : '';
  return inbox + (spool ? spool.split('\n').length : 0);
};
for (let i = 0; i < 300 && (pending(command.home) || pending(http.home)); i++)
  await new Promise((r) => setTimeout(r, 100));
const arrived = new Set(await (await fetch(`${stubUrl}/arrivals`)).json());
const lost = ids.filter((id) => !arrived.has(id)).length;
const senderCpu = { command: await command.stopSender(), http: await http.stopSender() };
stub.kill();

const p = (xs, q) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    q,
  );
const per = (which) =>
  which === 'bare' ? 0 : senderCpu[which] / Math.max(1, (which === 'command' ? command : http).events);
const agentCpu = { command: p(rows.command.cpu, 50), http: p(rows.http.cpu, 50), bare: p(rows.bare.cpu, 50) };
const total = { command: agentCpu.command + per('command'), http: agentCpu.http + per('http'), bare: agentCpu.bare };
const row = (name, which) =>
  `| ${name} | ${p(rows[which].ms, 50).toFixed(2)} | ${p(rows[which].ms, 95).toFixed(2)} | ${agentCpu[which].toFixed(2)} | ${per(which).toFixed(2)} | ${total[which].toFixed(2)} |`;
const md = `## PostToolUse: HTTP hook vs. command hook (\`npm run bench http-hook\` → bench/http-hook.bench.mjs)

Per tool call, same run, ${N} calls each, interleaved in a random order per round: the command hook as \`cairn
install\` wrote it before (exec form \`node cairn.cjs hook post-tool-use\`: a process that writes the inbox and
checks the sender) against the HTTP hook it writes now (one POST of the same ~700-byte payload to the sender's
door on 127.0.0.1 over a kept-alive connection, as Claude Code's HTTP client sends it; here Node's fetch stands
in for Claude Code's axios). Each machine has its own running sender; an instant stub plays the server. Agent
side = what the tool call costs the agent's machine before Claude Code goes on (the hook process, or the
request); sender = the background sender's CPU over the run divided by the calls it handled (drain, redaction,
spool, delivery; its start-up included). Node ${process.version}, ${process.platform}/${process.arch}.

| PostToolUse as | wall p50 ms | wall p95 ms | agent-side CPU p50 ms | sender CPU per call ms | total CPU per call ms |
|---|---|---|---|---|---|
${row('command hook (process per call)', 'command')}
${row('HTTP hook to the sender (no process)', 'http')}
| (scale: \`node -e 0\`, no hook at all) | ${p(rows.bare.ms, 50).toFixed(2)} | ${p(rows.bare.ms, 95).toFixed(2)} | ${agentCpu.bare.toFixed(2)} | – | – |

HTTP against command, same run: wall p50 **${(p(rows.http.ms, 50) / p(rows.command.ms, 50)).toFixed(3)}×**, agent-side CPU p50
**${(agentCpu.http / agentCpu.command).toFixed(3)}×**, total CPU per call **${(total.http / total.command).toFixed(2)}×**; the command hook's own CPU is
${(agentCpu.command / agentCpu.bare).toFixed(2)}× of a bare \`node -e 0\` and the HTTP request's ${(agentCpu.http / agentCpu.bare).toFixed(2)}×. Load average at the end: ${(await import('node:os')).loadavg()[0].toFixed(1)} (2 cores, shared). ${lost ? `**${lost} of ${ids.length} calls did not reach the stub.**` : `All ${ids.length} calls reached the stub (inbox and spool empty at the end).`}
Run at ${new Date().toISOString()}.`;
writeSection('http-hook', md);
console.log(md);
