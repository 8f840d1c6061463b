// What branch-aware memory costs the hooks client (issue 24): SessionStart reads branch, HEAD and trunk from .git
// files and runs one `git rev-list --max-count=200`; every other event reads HEAD from .git files. Each hook process
// is timed in a checkout (1,000 commits on main, a feature branch) and in a folder outside any repository (no git
// work: the cost of today's client), interleaved with `node -e 0` in the same run. Writes the "git-view" section.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildClient } from '../hooks-client/build.mjs';
import { percentile, writeSection } from './retrieval/harness.mjs';

const N = Number(process.env.BENCH_SAMPLES ?? 30);
const CLIENT = path.resolve('hooks-client/dist/cairn.cjs');
await buildClient({ quiet: true });

// A stub server in its own process (spawnSync blocks this one): a 50-row index for /api/context, 202 for events;
// it remembers the longest /api/context query string it was sent.
const stub = spawn(
  process.execPath,
  [
    '-e',
    `let longest = 0; const index = '<cairn-context>\\n' + Array.from({ length: 50 }, (_, i) => (1000 + i) + ' 9:00 🔵 A row of memory about the widgets service number ' + i).join('\\n') + '\\n</cairn-context>';
require('node:http').createServer((q, s) => { let b = ''; q.on('data', (c) => (b += c)); q.on('end', () => {
  if (q.url === '/longest') { s.writeHead(200); return s.end(String(longest)); }
  if (q.url.startsWith('/api/context?')) { longest = Math.max(longest, q.url.length); s.writeHead(200, { 'content-type': 'text/plain' }); return s.end(index); }
  let events = []; try { const j = JSON.parse(b); events = j.events ?? [j]; } catch {}
  s.writeHead(q.url === '/api/events/batch' ? 200 : 202, { 'content-type': 'application/json' });
  s.end(q.url === '/api/events/batch' ? JSON.stringify({ results: events.map((e) => ({ event_id: e.event_id, accepted: true, duplicate: false })) }) : '{"accepted":true,"duplicate":false}'); }); }).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const port = await new Promise((resolve) => stub.stdout.once('data', (d) => resolve(Number(String(d).trim()))));

const home = mkdtempSync(path.join(tmpdir(), 'cairn-bench-git-home-'));
mkdirSync(path.join(home, '.config', 'cairn'), { recursive: true });
writeFileSync(
  path.join(home, '.config', 'cairn', 'config.json'),
  JSON.stringify({ url: `http://127.0.0.1:${port}`, token: 'tok' }),
);

const gitEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: home };
const repo = path.join(mkdtempSync(path.join(tmpdir(), 'cairn-bench-git-')), 'widgets');
mkdirSync(repo);
execFileSync('git', ['-c', 'init.defaultBranch=main', 'init', '-q'], { cwd: repo, env: gitEnv });
const stream = Array.from(
  { length: 1_000 },
  (_, i) =>
    `commit refs/heads/main\ncommitter a <a@b> ${1_700_000_000 + i} +0000\ndata 6\nc${String(i).padStart(5, '0')}\n`,
).join('');
execFileSync('git', ['fast-import', '--quiet'], { cwd: repo, input: stream, env: gitEnv });
execFileSync('git', ['checkout', '-q', '-b', 'feature-y', 'main'], { cwd: repo, env: gitEnv });
const plain = mkdtempSync(path.join(tmpdir(), 'cairn-bench-nogit-'));

let seq = 0;
const startInput = (cwd) =>
  JSON.stringify({ session_id: `git-bench-${++seq}`, cwd, hook_event_name: 'SessionStart', source: 'startup' });
const promptInput = (cwd) =>
  JSON.stringify({
    session_id: 'git-bench',
    cwd,
    hook_event_name: 'UserPromptSubmit',
    prompt: `rename the widgets table ${++seq}`,
  });

const CPU_PRELOAD = path.join(mkdtempSync(path.join(tmpdir(), 'cairn-bench-cpu-')), 'cpu.cjs');
writeFileSync(
  CPU_PRELOAD,
  "process.on('exit', () => { try { const u = process.cpuUsage(); require('fs').writeSync(3, String((u.user + u.system) / 1000)); } catch {} });\n",
);
function time(args, input, cwd) {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, {
    input,
    cwd,
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, HOME: home, CAIRN_SENDER: 'off', NODE_OPTIONS: `--require ${CPU_PRELOAD}` },
  });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { ms, cpu: Number(r.output[3]) || NaN };
}

const BASE = 'node -e 0 (bare start)';
const START_OUT = 'hook session-start outside a repository (no git work: today’s cost)';
const START_IN = 'hook session-start in a checkout (branch + HEAD + trunk from .git files, git rev-list of 200)';
const PROMPT_OUT = 'hook user-prompt-submit outside a repository';
const PROMPT_IN = 'hook user-prompt-submit in a checkout (HEAD read from .git files)';
const cases = {
  [BASE]: () => time(['-e', '0'], '', plain),
  [START_OUT]: () => time([CLIENT, 'hook', 'session-start'], startInput(plain), plain),
  [START_IN]: () => time([CLIENT, 'hook', 'session-start'], startInput(repo), repo),
  [PROMPT_OUT]: () => time([CLIENT, 'hook', 'user-prompt-submit'], promptInput(plain), plain),
  [PROMPT_IN]: () => time([CLIENT, 'hook', 'user-prompt-submit'], promptInput(repo), repo),
};
const times = Object.fromEntries(Object.keys(cases).map((k) => [k, { ms: [], cpu: [] }]));
for (let i = 0; i < N + 2; i++) {
  for (const [name, fn] of Object.entries(cases)
    .map((c) => [Math.random(), c])
    .sort((a, b) => a[0] - b[0])
    .map(([, c]) => c)) {
    const r = fn();
    if (i >= 2) {
      times[name].ms.push(r.ms);
      times[name].cpu.push(r.cpu);
    }
  }
}
const longest = Number(await (await fetch(`http://127.0.0.1:${port}/longest`)).text());
stub.kill();

const p50 = (xs) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
const p95 = (xs) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    95,
  );
const rows = Object.entries(times).map(
  ([name, t]) => `| ${name} | ${p50(t.ms).toFixed(1)} | ${p95(t.ms).toFixed(1)} | ${p50(t.cpu).toFixed(1)} |`,
);
const ratio = (a, b, k) => (p50(times[a][k]) / p50(times[b][k])).toFixed(2);
const md = `## Branch-aware memory: what the client pays (\`npm run bench git-view\` → bench/git-view.bench.mjs)

One hook process (spawn → exit) of \`cairn.cjs\`, ${N} runs each, interleaved in a new random order each round, against a
stub server that answers at once (a 50-row index). "In a checkout": 1,000 commits on main, branch feature-y checked out;
SessionStart reads branch, HEAD and trunk from .git files and runs \`git rev-list --max-count=200\` (hooks-client/src/repo/git.ts: absolute git, no shell, every program a repository config names turned off);
other events read HEAD from .git files. "Outside": a folder in no repository, so no git work at all (today's client).
CPU is the node process's own user + system time (git's own CPU is not in it; wall time is). Node ${process.version}.

| case | wall p50 ms | wall p95 ms | CPU p50 ms |
|---|---|---|---|
${rows.join('\n')}

SessionStart in a checkout vs outside: **${ratio(START_IN, START_OUT, 'ms')}× wall p50**, ${ratio(START_IN, START_OUT, 'cpu')}× node CPU p50.
UserPromptSubmit (every event reads HEAD): ${ratio(PROMPT_IN, PROMPT_OUT, 'ms')}× wall p50, ${ratio(PROMPT_IN, PROMPT_OUT, 'cpu')}× CPU p50.
Longest /api/context request line sent: ${longest} characters (200 commits × 13 + branch, head, trunk, project, tz).
`;
writeSection('git-view', md);
console.log(md);
