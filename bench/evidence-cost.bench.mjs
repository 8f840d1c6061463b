// What evidence costs (issue 34), measured in one run against its own baseline:
// - SessionStart: the hook process (spawn → exit) in a 5,000-file git checkout, against `wrangler dev` holding 200
//   records that cite files of it, with checking (POST /api/context with the checkout report) and without
//   (CAIRN_EVIDENCE=off: GET /api/context, today's client, from a device that never reported), 30 runs each,
//   interleaved; also with one watched file changed before each run (a report of the change).
// - A tool event's extra ids: eventFileIds (hooks-client/src/hook/evidence.ts) in process for a Read and for an Edit
//   (which also reads the 5,000-entry git index), and the PostToolUse hook process with and without them.
// Writes the "evidence-cost" section.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { buildClient } from '../hooks-client/build.mjs';
import { freePort } from '../scripts/dev-server.mjs';
import { api, percentile, seed, startBenchServer, writeSection } from './retrieval/harness.mjs';

const N = Number(process.env.BENCH_SAMPLES ?? 30);
const EVENTS = 500;
const FILES = 5_000;
const RECORDS = 200;
const CLIENT = path.resolve('hooks-client/dist/cairn.cjs');
await buildClient({ quiet: true });

// A 5,000-file checkout: 50 folders of 100 small TypeScript files, one commit.
const home = mkdtempSync(path.join(tmpdir(), 'cairn-bench-ev-home-'));
const repo = path.join(mkdtempSync(path.join(tmpdir(), 'cairn-bench-ev-')), 'widgets');
const gitEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: home };
const git = (...args) =>
  execFileSync('git', ['-c', 'user.email=a@b', '-c', 'user.name=a', '-c', 'init.defaultBranch=main', ...args], {
    cwd: repo,
    env: gitEnv,
    stdio: 'pipe',
  }).toString();
mkdirSync(repo);
git('init', '-q');
git('remote', 'add', 'origin', 'git@github.com:bench/widgets.git');
const file = (i) => `src/m${String(Math.floor(i / 100)).padStart(2, '0')}/f${String(i).padStart(4, '0')}.ts`;
const text = (i, v = 0) =>
  `// module ${i}\nexport function handler${i}(input: string): string {\n  return input.trim() + '${v}';\n}\n${'// padding line of a realistic file\n'.repeat(40)}`;
for (let i = 0; i < FILES; i++) {
  mkdirSync(path.join(repo, path.dirname(file(i))), { recursive: true });
  writeFileSync(path.join(repo, file(i)), text(i));
}
git('add', '.');
git('commit', '-q', '-m', 'base');
const blobOf = (s) => {
  const b = Buffer.from(s);
  return createHash('sha1').update(`blob ${b.length}\0`).update(b).digest('hex');
};

const port = await freePort();
const srv = await startBenchServer(port);
try {
  // 200 records, each citing two files of the checkout at their committed content and naming their handlers.
  const T0 = Date.now() - 86_400_000;
  await seed(
    srv,
    'github.com/bench/widgets',
    'bench-evidence',
    Array.from({ length: RECORDS }, (_, r) => {
      const a = (r * 7) % FILES;
      const b = (r * 13 + 1) % FILES;
      return {
        type: 'discovery',
        title: `handler${a} trims its input before handler${b} sees it`,
        narrative: `handler${a} in ${file(a)} and handler${b} in ${file(b)} agree on trimming.`,
        files_read: [file(a), file(b)],
        file_ids: { [file(a)]: { blob: blobOf(text(a)) }, [file(b)]: { blob: blobOf(text(b)) } },
        created_at: T0 + r * 1000,
      };
    }),
  );
  // The index shows 100 observations, so with a checkout it reads (and checks) 200 candidates: every record.
  await api(srv, 'PATCH', '/api/admin/settings', { context_observations: 100 });
  // A second device of the same member, that never reports a checkout: today's client.
  const offToken = JSON.parse(await api(srv, 'POST', '/api/admin/devices', { name: 'bench-off' })).token;
  const config = (token) => {
    const h = mkdtempSync(path.join(tmpdir(), 'cairn-bench-ev-cfg-'));
    mkdirSync(path.join(h, '.config', 'cairn'), { recursive: true });
    writeFileSync(path.join(h, '.config', 'cairn', 'config.json'), JSON.stringify({ url: srv.url, token }));
    return h;
  };
  const onHome = config(srv.token);
  const offHome = config(offToken);

  let seq = 0;
  const hook = (event, h, extraEnv, fields) => {
    const t = process.hrtime.bigint();
    const r = spawnSync(process.execPath, [CLIENT, 'hook', event], {
      input: JSON.stringify({ session_id: `ev-bench-${++seq}`, cwd: repo, ...fields }),
      cwd: repo,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: h, CAIRN_SENDER: 'off', ...extraEnv },
    });
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    if (r.status !== 0) throw new Error(`hook ${event} exited ${r.status}: ${r.stderr}`);
    return { ms, out: r.stdout };
  };
  const start = (h, env) => hook('session-start', h, env, { hook_event_name: 'SessionStart', source: 'startup' });
  const changedFile = file(((RECORDS - 1) * 7) % FILES); // cited by the newest record
  let changes = 0;
  const cases = {
    'SessionStart without checking (CAIRN_EVIDENCE=off, GET /api/context: today)': () =>
      start(offHome, { CAIRN_EVIDENCE: 'off' }),
    'SessionStart with checking, nothing changed (a digest)': () => start(onHome, {}),
    'SessionStart with checking, one cited file changed (its entry)': () => {
      writeFileSync(path.join(repo, changedFile), text(((RECORDS - 1) * 7) % FILES, ++changes));
      return start(onHome, {});
    },
  };
  // Warm-up: the first report (whole, then the watch's files) and a wrangler that has compiled every route.
  for (let i = 0; i < 3; i++) for (const run of Object.values(cases)) run();
  const first = start(onHome, {}).out;
  const marked = (JSON.parse(first).hookSpecificOutput?.additionalContext ?? '').match(/code changed/g)?.length ?? 0;
  const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (let i = 0; i < N; i++) {
    const order = Object.entries(cases).sort(() => Math.random() - 0.5);
    for (const [name, run] of order) times[name].push(run().ms);
  }

  // A tool event's extra ids, in process: the client's own function, bundled from its source.
  const bundled = await build({
    entryPoints: [path.resolve('hooks-client/src/hook/evidence.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    write: false,
    external: ['node:*'],
  });
  const { eventFileIds } = await import(
    `data:text/javascript;base64,${Buffer.from(bundled.outputFiles[0].text).toString('base64')}`
  );
  const ctx = {
    config: { evidence: true },
    projectRoot: repo,
    input: { cwd: repo },
    io: { env: { ...process.env, HOME: home } },
  };
  // Wall time and this process's CPU time per event: on a loaded machine the wall clock also counts waiting for a core.
  const inProcess = { Read: { wall: [], cpu: [] }, Edit: { wall: [], cpu: [] } };
  for (let i = 0; i < EVENTS + 20; i++) {
    const f = path.join(repo, file((i * 31) % FILES));
    for (const tool of ['Read', 'Edit']) {
      const c = process.cpuUsage();
      const t = process.hrtime.bigint();
      const ids = eventFileIds(ctx, tool, { file_path: f, old_string: 'a', new_string: 'b' });
      const ms = Number(process.hrtime.bigint() - t) / 1e6;
      const used = process.cpuUsage(c);
      if (!ids?.length) throw new Error(`no ids for ${tool}`);
      if (i >= 20) {
        inProcess[tool].wall.push(ms);
        inProcess[tool].cpu.push((used.user + used.system) / 1000);
      }
    }
  }
  const post = (env) =>
    hook('post-tool-use', onHome, env, {
      hook_event_name: 'PostToolUse',
      tool_name: 'Edit',
      tool_input: { file_path: path.join(repo, file(11)), old_string: 'a', new_string: 'b' },
      tool_response: 'ok',
      tool_use_id: `tu-${++seq}`,
    }).ms;
  const postTimes = { off: [], on: [] };
  for (let i = 0; i < 3; i++) post({}), post({ CAIRN_EVIDENCE: 'off' });
  for (let i = 0; i < N; i++)
    for (const k of Math.random() < 0.5 ? ['on', 'off'] : ['off', 'on'])
      postTimes[k].push(post(k === 'off' ? { CAIRN_EVIDENCE: 'off' } : {}));

  const p = (xs, q) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      q,
    );
  const [today, digest, change] = Object.keys(cases);
  const rows = Object.entries(times).map(
    ([name, xs]) =>
      `| ${name} | ${p(xs, 50).toFixed(1)} | ${p(xs, 95).toFixed(1)} | ${(p(xs, 95) / p(times[today], 95)).toFixed(2)}× |`,
  );
  const md = `## Evidence: what checking costs (\`npm run bench evidence-cost\` → bench/evidence-cost.bench.mjs)

A ${FILES.toLocaleString('en')}-file git checkout (50 folders × 100 files of ~1.6 KB, one commit) and \`wrangler dev --local\`
holding ${RECORDS} records of its project, each citing two of its files with their blob ids; the team shows 100
observations in the index, so with a checkout all ${RECORDS} are candidates (checked, ${RECORDS * 2} files watched). One hook process (spawn → exit)
of \`cairn.cjs\` per run, ${N} runs per case, interleaved in a new random order each round, after 3 warm-up rounds (the
first report, whole, happens there). "Without checking" is today's client (\`CAIRN_EVIDENCE=off\`: GET /api/context
with the git view) from a device that never reported. Node ${process.version}.

| case | wall p50 ms | wall p95 ms | p95 vs today |
|---|---|---|---|
${rows.join('\n')}

SessionStart with checking vs today: **${(p(times[digest], 95) / p(times[today], 95)).toFixed(2)}× p95** with nothing changed,
${(p(times[change], 95) / p(times[today], 95)).toFixed(2)}× p95 with a cited file changed (goal ≤ 1.25×). The index after the
change marked ${marked} record(s) \`code changed\`.

A tool event's extra ids, in process (\`eventFileIds\`, ${EVENTS} events each on the same checkout; load average
${loadavg()
  .map((l) => l.toFixed(1))
  .join(' / ')} on ${cpus().length} cores when it ended, so the wall clock also counts waiting for a core):

| event | wall p50 ms | wall p95 ms | CPU p50 ms | CPU p95 ms |
|---|---|---|---|---|
| Read (one file: repository checks, lstat per folder, read, two SHA-1s) | ${p(inProcess.Read.wall, 50).toFixed(2)} | ${p(inProcess.Read.wall, 95).toFixed(2)} | ${p(inProcess.Read.cpu, 50).toFixed(2)} | ${p(inProcess.Read.cpu, 95).toFixed(2)} |
| Edit (the same, and the ${FILES.toLocaleString('en')}-entry git index read for its base) | ${p(inProcess.Edit.wall, 50).toFixed(2)} | ${p(inProcess.Edit.wall, 95).toFixed(2)} | ${p(inProcess.Edit.cpu, 50).toFixed(2)} | ${p(inProcess.Edit.cpu, 95).toFixed(2)} |

Goal ≤ 5 ms p95. The PostToolUse hook process (an Edit, sent at once) with its ids vs with \`CAIRN_EVIDENCE=off\`:
p50 ${p(postTimes.on, 50).toFixed(1)} vs ${p(postTimes.off, 50).toFixed(1)} ms, p95 ${p(postTimes.on, 95).toFixed(1)} vs ${p(postTimes.off, 95).toFixed(1)} ms (**${(p(postTimes.on, 50) / p(postTimes.off, 50)).toFixed(2)}× p50**).
`;
  writeSection('evidence-cost', md);
  console.log(md);
} finally {
  await srv.stop();
}
