// Wall time of the hooks client per hook process, beside `node -e 0` measured in the same run (interleaved),
// with the server up, down, and a session start that injects a 50-row context. Writes the "hooks-client"
// section of BENCHMARKS.md.
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildClient } from '../hooks-client/build.mjs';
import { percentile, seed, startBenchServer, writeSection } from './retrieval/harness.mjs';
import { observationsFor } from './retrieval/synthetic.mjs';

const N = Number(process.env.BENCH_SAMPLES ?? 40);
// What `cairn install` and the plugin run (same text as cairn.mjs; the .cjs name skips the ES module loader).
const CLIENT = path.resolve('hooks-client/dist/cairn.cjs');
const CLIENT_MJS = path.resolve('hooks-client/dist/cairn.mjs');
await buildClient({ quiet: true });

const srv = await startBenchServer(Number(process.env.BENCH_PORT ?? 8795));
const PROJECT = 'github.com/bench/hooks';
await seed(srv, PROJECT, 'bench-hooks', observationsFor(0, 0, 50, Date.UTC(2026, 10, 1)));

const deadPort = await new Promise((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});

function machineHome(url) {
  const home = mkdtempSync(path.join(tmpdir(), 'cairn-bench-home-'));
  mkdirSync(path.join(home, '.config', 'cairn'), { recursive: true });
  writeFileSync(path.join(home, '.config', 'cairn', 'config.json'), JSON.stringify({ url, token: srv.token }));
  return home;
}
const repo = mkdtempSync(path.join(tmpdir(), 'cairn-bench-repo-'));
execFileSync('git', ['init', '-q'], { cwd: repo });
execFileSync('git', ['remote', 'add', 'origin', 'git@github.com:bench/hooks.git'], { cwd: repo });
// A minimal server in its own process (spawnSync blocks this one): it answers every event at once, so the
// row measures the client's own cost, apart from how fast the real server answers.
const stub = spawn(process.execPath, ['-e', `require('node:http').createServer((q, s) => { q.resume(); q.on('end', () => { s.writeHead(202, { 'content-type': 'application/json' }); s.end('{"accepted":true,"duplicate":false}'); }); }).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`], { stdio: ['ignore', 'pipe', 'inherit'] });
const stubPort = await new Promise((resolve) => stub.stdout.once('data', (d) => resolve(Number(String(d).trim()))));
const up = machineHome(srv.url);
const quick = machineHome(`http://127.0.0.1:${stubPort}`);
const down = machineHome(`http://127.0.0.1:${deadPort}`);

let seq = 0;
const postInput = () => JSON.stringify({
  session_id: 'bench-session', cwd: repo, hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_use_id: `b-${++seq}`,
  tool_input: { command: 'npm test' }, tool_response: { stdout: 'ok\n'.repeat(200), stderr: '', interrupted: false, isImage: false },
});
const stopInput = () => JSON.stringify({ session_id: 'bench-session', cwd: repo, hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: `Turn ${++seq} done: the tests pass.` });
const startInput = () => JSON.stringify({ session_id: `bench-start-${++seq}`, cwd: repo, hook_event_name: 'SessionStart', source: 'startup' });

// CPU time (user + sys) of each node process, reported by itself at exit on fd 3: unlike wall time it hardly
// moves when other work shares the machine. The preload is the same for every case, so ratios stay fair.
const CPU_PRELOAD = path.join(mkdtempSync(path.join(tmpdir(), 'cairn-bench-cpu-')), 'cpu.cjs');
writeFileSync(CPU_PRELOAD, "process.on('exit', () => { try { const u = process.cpuUsage(); require('fs').writeSync(3, String((u.user + u.system) / 1000)); } catch {} });\n");

function time(args, home, input, viaShell = false) {
  const t = process.hrtime.bigint();
  // viaShell: the way Claude Code runs a settings.json command (a shell runs the text `cairn install` wrote).
  const [file, argv] = viaShell ? ['/bin/sh', ['-c', ['node', ...args.map((a) => (a.includes(' ') || a.includes('/') ? `"${a}"` : a))].join(' ')]] : [process.execPath, args];
  const env = { PATH: `${path.dirname(process.execPath)}:${process.env.PATH}`, HOME: home, NODE_OPTIONS: `--require ${CPU_PRELOAD}` };
  const r = spawnSync(file, argv, { input, env, cwd: repo, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { ms, cpu: Number(r.output[3]) || NaN, stdout: r.stdout };
}

// The floor for any Node client of this server: load node:net, send one event-sized request, read the answer.
const RAW = `const s = require('node:net').connect(${stubPort}, '127.0.0.1'); const b = Buffer.from(process.argv[1]);
s.write(\`POST /api/sessions/observations HTTP/1.1\\r\\nhost: 127.0.0.1\\r\\nconnection: close\\r\\ncontent-type: application/json\\r\\ncontent-length: \${b.length}\\r\\n\\r\\n\`); s.write(b);
s.on('data', () => s.destroy());`;

const SHELL_BASE = 'sh -c \'node -e 0\' (bare start, run the way settings.json commands are)';
const SHELL_HOOK = 'sh -c \'node "…/cairn.cjs" hook post-tool-use\' as cairn install writes it, server up';
const cases = {
  'node -e 0 (bare start)': () => time(['-e', '0'], up, ''),
  [SHELL_BASE]: () => time(['-e', '0'], up, '', true),
  [SHELL_HOOK]: () => time([CLIENT, 'hook', 'post-tool-use'], up, postInput(), true),
  'node -e: one raw node:net request to the stub (floor)': () => time(['-e', RAW, postInput()], quick, ''),
  'hook post-tool-use, server up': () => time([CLIENT, 'hook', 'post-tool-use'], up, postInput()),
  'hook post-tool-use, instant stub server (client cost only)': () => time([CLIENT, 'hook', 'post-tool-use'], quick, postInput()),
  'same, run as cairn.mjs': () => time([CLIENT_MJS, 'hook', 'post-tool-use'], up, postInput()),
  'cairn --version (start-up + bundle load)': () => time([CLIENT, '--version'], up, ''),
  'hook post-tool-use, server down (spooled)': () => time([CLIENT, 'hook', 'post-tool-use'], down, postInput()),
  'hook session-start, 50-row context': () => time([CLIENT, 'hook', 'session-start'], up, startInput()),
  // Claude Code waits for this one now (it is not async): the turn's summary must not be lost when claude -p exits.
  'hook stop (synchronous), server up': () => time([CLIENT, 'hook', 'stop'], up, stopInput()),
};
const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
const cpus = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
let contextChars = 0;
// Cases run in a new random order each round: wrangler keeps working for a while after an event (the
// observer, indexing), and in a fixed order that work always lands on the same next case.
const shuffled = () => Object.entries(cases).map((c) => [Math.random(), c]).sort((x, y) => x[0] - y[0]).map(([, c]) => c);
for (let i = 0; i < N + 3; i++) {
  for (const [name, fn] of shuffled()) {
    const r = fn();
    if (name.includes('session-start') && r.stdout) contextChars = JSON.parse(r.stdout).hookSpecificOutput.additionalContext.length;
    if (i >= 3) {
      // first rounds warm the disk cache and the dev server
      times[name].push(r.ms);
      cpus[name].push(r.cpu);
    }
  }
}
await srv.stop();
stub.kill();

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p95: percentile(s, 95) };
};
const base = stats(times['node -e 0 (bare start)']).p50;
const p50Of = (name) => stats(times[name]).p50;
const ratio = (name) => p50Of(name) / base;
const cpuBase = stats(cpus['node -e 0 (bare start)']).p50;
const cpuRatio = (name) => stats(cpus[name]).p50 / cpuBase;
const shellRatio = p50Of(SHELL_HOOK) / p50Of(SHELL_BASE);
const rows = Object.entries(times).map(([name, xs]) => {
  const s = stats(xs);
  const c = stats(cpus[name]).p50;
  return `| ${name} | ${s.p50.toFixed(1)} | ${s.p95.toFixed(1)} | ${(s.p50 / base).toFixed(2)}× | ${c.toFixed(1)} | ${(c / cpuBase).toFixed(2)}× |`;
});
const md = `## Hooks client (\`npm run bench\` → bench/hooks-client.bench.mjs)

Wall time of one hook process (spawn → exit) of \`cairn.cjs\` (what \`cairn install\` and the plugin run), ${N}
runs each, interleaved with \`node -e 0\` in the same run (in a new random order each round) so machine load hits all alike. Server: \`wrangler dev --local\` on 127.0.0.1; "down" is a closed port (the event
is appended to the spool). Session start injects the real context index of 50 seeded observations
(${contextChars} chars of additionalContext). Node ${process.version}, ${process.platform}/${process.arch}.

| case | p50 ms | p95 ms | p50 vs node -e 0 | CPU p50 ms | CPU vs node -e 0 |
|---|---|---|---|---|---|
${rows.join('\n')}

Goal (issue 13): post-tool-use as \`cairn install\` writes it (a shell runs the settings.json command) ≤ 1.3× the
same shell running \`node -e 0\` — ${shellRatio <= 1.3 ? 'met' : 'not met'} in this run (${shellRatio.toFixed(2)}×; run directly, without the shell:
${ratio('hook post-tool-use, server up').toFixed(2)}×). Against a stub that answers at once (the client's own cost) it is ${ratio('hook post-tool-use, instant stub server (client cost only)').toFixed(2)}×; the floor row, what any
Node client pays for one request to the same stub (node:net and its stream modules load, connect, answer), is
${ratio('node -e: one raw node:net request to the stub (floor)').toFixed(2)}×, so the client's own work (stdin, config, project key, redaction, the spool write that makes the
event survive the hook being killed, and moving the spool cursor after the answer) costs ${(p50Of('hook post-tool-use, instant stub server (client cost only)') - p50Of('node -e: one raw node:net request to the stub (floor)')).toFixed(1)} ms over it.
In CPU time, which other load on the machine hardly moves, post-tool-use against the stub costs ${cpuRatio('hook post-tool-use, instant stub server (client cost only)').toFixed(2)}× a bare start
and the node:net floor ${cpuRatio('node -e: one raw node:net request to the stub (floor)').toFixed(2)}×.
With the server down the hook is bounded by the 1 s budget (a refused connection here, so it is fast; an
unanswering host costs up to the budget). Claude Code runs post-tool-use with \`async: true\` (see
plugin/hooks/hooks.json and \`cairn install\`), so none of this blocks the agent; Stop and SessionEnd run
synchronously so that \`claude -p\` cannot end them before the turn's summary is on its way. Run at ${new Date().toISOString()}.

Pass 3 (spool-first delivery, so that a hook ended mid-flight loses nothing; before = the client of commit
450aca0, measured with this bench in the same hour, load average ~24 on 2 cores, so read the CPU columns):
post-tool-use against the stub 29.9 → 33.2 ms CPU (1.48× → 1.62× of a bare start; server up 30.0 → 34.4 ms,
1.48× → 1.68×; through the shell as installed 29.7 → 33.0 ms, 1.47× → 1.61×), stop 31.3 → 34.3 ms; the
node:net floor is 1.28–1.32× in both runs. The ~3 ms are the price of durability: each event is appended to
the spool under a lock file (with the meta file holding the cursor and the \`client_seq\` counter) before any
network work, a replay lock is taken, and the cursor is moved (and the spool emptied) after the answer. On
this machine's disk a file create+unlink costs ~110 µs and a write+rename ~150 µs, and the path has five of
them. So the 1.3× goal is not reachable with a client that sends each event from the hook: the floor alone,
one node:net request and no client work at all, already costs 1.28–1.32×. Reaching it would take a hook that
only appends and leaves sending to the next synchronous hook (Stop, SessionEnd, the next prompt), which
would delay the live feed until the end of each turn; we chose live delivery.

What the start-up passes removed. Pass 1 (from commit 362412c: ES module bundle, node:http, node:crypto;
post-tool-use up 148.2 ms = 4.53× of a 32.7 ms bare start): the ES module loader (the bundle is plain
script, shipped as \`cairn.cjs\`), per-builtin ESM facades (\`process.getBuiltinModule\`), node:http (HTTP/1.1
over node:net), node:crypto (SHA-256 in plain JS), the stdin stream, and the commands' code on the hook path.
Pass 2 (from commit ec735c7: stub 57.1 ms = 2.09×, up 2.59×, down 1.79×, \`--version\` 1.39× of 27.3 ms):
the file Node runs is a small boot script holding the client as a string, compiled with V8's code cache
(written by the first post-tool-use into the state dir, named by a hash of the client text, Node version
and arch), which skips parsing the bundle and compiling the functions a hook runs; a hook that printed
nothing exits as soon as it is done instead of waiting for Node to close its handles; the start time comes
from \`process.uptime()\` rather than the \`performance\` global (which loads perf_hooks); redaction rules
whose literal prefix (\`ghp_\`, \`AKIA\`, \`-----BEGIN\`, …) is absent are skipped without compiling their regex,
and tag stripping runs only on text containing \`<\`. What is left is mostly node:net itself (the floor row)
and, against \`wrangler dev\`, the server's answer (the up − stub difference).`;
writeSection('hooks-client', md);
console.log(md);
