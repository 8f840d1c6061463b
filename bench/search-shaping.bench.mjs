// What result shaping costs (issue 9: near-duplicates out of the head, which loads 30 rows instead of a page's
// 10; one more FTS statement when the query names a day): the default search at 100k observations, a baseline
// commit against this tree in the same run, both seeded alike (bench/retrieval/synthetic.mjs, 100 projects)
// and sampled in alternating rounds. BENCH_BASELINE_REF picks the "before" commit (default: main just before
// the shaping landed). Writes the "search-shaping" section of BENCHMARKS.md.
import { percentile, seed, startBenchServer, timeAlternating, writeSection } from './retrieval/harness.mjs';
import { QUERIES, observationsFor } from './retrieval/synthetic.mjs';
import { checkoutBaseline, freePort } from './baseline.mjs';

const ROWS = Number(process.env.BENCH_SEARCH_ROWS ?? 100_000);
const PROJECTS = 100;
const N = Number(process.env.BENCH_SAMPLES ?? 100);
const END = Date.UTC(2026, 10, 1);
const REF = process.env.BENCH_BASELINE_REF ?? '2cb5b54';
const log = (...a) => console.log(new Date().toISOString().slice(11, 19), ...a);
const enc = encodeURIComponent;
const project = 'github.com/bench/project-007';

async function fill(srv) {
  const per = ROWS / PROJECTS;
  for (let p = 0; p < PROJECTS; p++) {
    await seed(
      srv,
      `github.com/bench/project-${String(p).padStart(3, '0')}`,
      `bench-${p}`,
      observationsFor(p, 0, per, END).map(({ symbol, ...o }) => o),
    );
  }
}

const base = checkoutBaseline(REF);
const builds = [];
try {
  builds.push({
    name: `before (${base.commit})`,
    srv: await startBenchServer(await freePort(), {}, { root: base.root }),
  });
  builds.push({ name: 'after (this tree)', srv: await startBenchServer(await freePort()) });
  for (const b of builds) {
    const t = Date.now();
    await fill(b.srv);
    log(b.name, `seeded ${ROWS} in ${((Date.now() - t) / 1000).toFixed(0)} s`);
  }
  const cases = [
    ['search default, one project', (q) => `/api/search?q=${enc(q)}&project=${enc(project)}`],
    [
      'search default, one project, a day named',
      (q) => `/api/search?q=${enc(`${q} on 15.10.2026`)}&project=${enc(project)}`,
    ],
    ['search default, whole team', (q) => `/api/search?q=${enc(q)}`],
    ['search default, one project, second page', (q) => `/api/search?q=${enc(q)}&project=${enc(project)}&offset=10`],
  ];
  const times = await timeAlternating(builds, cases, QUERIES, N);
  const rows = [];
  for (const [name] of cases) {
    const [before, after] = builds.map((b) => times.get(`${b.name}|${name}`));
    const [b50, b95, a50, a95] = [
      percentile(before, 50),
      percentile(before, 95),
      percentile(after, 50),
      percentile(after, 95),
    ];
    rows.push(
      `| ${name} | ${b50.toFixed(1)} / ${b95.toFixed(1)} | ${a50.toFixed(1)} / ${a95.toFixed(1)} | ${(a50 / b50).toFixed(2)}× / ${(a95 / b95).toFixed(2)}× |`,
    );
  }
  log(`\n${rows.join('\n')}`);
  writeSection(
    'search-shaping',
    [
      '## Result shaping at 100k observations, before/after (`npm run bench` → bench/search-shaping.bench.mjs)',
      '',
      `Local \`wrangler dev\`, ${ROWS.toLocaleString('en')} synthetic observations in ${PROJECTS} projects of one team, both builds seeded`,
      `alike and sampled in ${rounds} alternating rounds, ${N} requests per case and build, ${QUERIES.length} phrase queries (the`,
      'common-word worst case). "A day named" appends "on 15.10.2026" (a day inside the data), which the new build turns',
      'into one more FTS statement over that window; every page now loads the first 30 rows to find near-duplicates.',
      '',
      `| route | before (${base.commit}) p50 / p95 ms | after p50 / p95 ms | after / before |`,
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
