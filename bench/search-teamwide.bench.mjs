// Team-wide search at 100k observations, a baseline commit against this tree in the same run: both servers
// seeded with the same synthetic rows (bench/retrieval/synthetic.mjs, 100 projects), the newest rows embedded by
// the local vector stack (a team-wide hybrid query scans at most the newest LOCAL_SCAN_LIMIT = 5,000 vectors, so
// vectors beyond those change nothing; this tree embeds with the local sentence model, as `npm start` does), then
// sampled in alternating rounds. Writes the "search-teamwide"
// section of BENCHMARKS.md.
import { api, percentile, seed, startBenchServer, timeAlternating, writeSection } from './retrieval/harness.mjs';
import { QUERIES, observationsFor } from './retrieval/synthetic.mjs';
import { checkoutBaseline, freePort } from './baseline.mjs';

const ROWS = Number(process.env.BENCH_SEARCH_ROWS ?? 100_000);
const EMBEDDED = 6_000;
const PROJECTS = 100;
const N = Number(process.env.BENCH_SAMPLES ?? 100);
const END = Date.UTC(2026, 10, 1);
const log = (...a) => console.log(new Date().toISOString().slice(11, 19), ...a);
const enc = encodeURIComponent;

async function fill(srv) {
  const per = ROWS / PROJECTS;
  for (let p = 0; p < PROJECTS; p++) {
    await seed(srv, `github.com/bench/project-${String(p).padStart(3, '0')}`, `bench-${p}`, observationsFor(p, 0, per, END).map(({ symbol, ...o }) => o));
  }
  let embedded = 0;
  while (embedded < EMBEDDED) {
    const out = JSON.parse(await api(srv, 'POST', '/api/admin/backfill-vectors?limit=250'));
    embedded += out.indexed;
    if (out.indexed === 0) break;
  }
  return embedded;
}

const base = checkoutBaseline();
const builds = [];
try {
  builds.push({ name: `before (${base.commit})`, srv: await startBenchServer(await freePort(), {}, { root: base.root }) });
  // This tree as `npm start` runs it: with the local sentence model (scripts/sentence-embedder.mjs) beside it.
  builds.push({ name: 'after (this tree)', srv: await startBenchServer(await freePort(), {}, { embedder: true }) });
  for (const b of builds) {
    const t = Date.now();
    b.embedded = await fill(b.srv);
    log(b.name, `seeded ${ROWS}, embedded ${b.embedded} in ${((Date.now() - t) / 1000).toFixed(0)} s`);
  }
  const cases = [
    ['search FTS, whole team', (q) => `/api/search?q=${enc(q)}&mode=fts`],
    ['search hybrid, whole team', (q) => `/api/search?q=${enc(q)}`],
  ];
  const times = await timeAlternating(builds, cases, QUERIES, N);
  const rows = [];
  for (const [name] of cases) {
    for (const b of builds) {
      const xs = times.get(`${b.name}|${name}`);
      rows.push(`| ${name} | ${b.name} | ${percentile(xs, 50).toFixed(1)} | ${percentile(xs, 95).toFixed(1)} |`);
    }
  }
  log(`\n${rows.join('\n')}`);
  writeSection(
    'search-teamwide',
    [
      '## Team-wide search at 100k observations, before/after (`npm run bench` → bench/search-teamwide.bench.mjs)',
      '',
      `Local \`wrangler dev\`, ${ROWS.toLocaleString('en')} synthetic observations in ${PROJECTS} projects of one team, the newest ${EMBEDDED.toLocaleString('en')} embedded`,
      `(a team-wide hybrid query scans at most the newest 5,000 vectors). Both builds seeded alike and sampled in ${rounds}`,
      `alternating rounds, ${N} requests per case and build, ${QUERIES.length} phrase queries (the common-word worst case).`,
      'Goal: team-wide hybrid ≤ 100 ms p95.',
      '',
      '| route | build | p50 ms | p95 ms |',
      '|---|---|---|---|',
      ...rows,
      '',
      `Run at ${new Date().toISOString()}.`,
    ].join('\n'),
  );
} finally {
  for (const b of builds) await b.srv.stop();
  base.cleanup();
}
process.exit(0);
