// Team-wide search at 100k observations, a baseline commit against this tree in the same run. One database is
// seeded (bench/retrieval/synthetic.mjs, 100 projects) and its newest rows embedded by the local sentence model,
// as `npm start` runs it (a team-wide hybrid query scans at most the newest LOCAL_SCAN_LIMIT = 5,000 vectors, so
// vectors beyond those change nothing); both builds then serve a copy of that same database, each with the model
// service of its own checkout, and are sampled in alternating rounds. Hybrid search is measured twice: with
// query texts neither build has seen (each a new casing or trailing punctuation of the 12 queries, which keyword
// search reads alike but the model does not, so a cache of query vectors cannot flatter it) and with the 12
// queries repeated. Writes the "search-teamwide" section of BENCHMARKS.md.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { api, percentile, seed, startBenchServer, timeAlternating, writeSection } from './retrieval/harness.mjs';
import { QUERIES, observationsFor } from './retrieval/synthetic.mjs';
import { checkoutBaseline, freePort } from './baseline.mjs';
import { variant } from './search/variants.mjs';

const ROWS = Number(process.env.BENCH_SEARCH_ROWS ?? 100_000);
const EMBEDDED = Number(process.env.BENCH_SEARCH_EMBEDDED ?? 6_000);
const PROJECTS = 100;
const N = Number(process.env.BENCH_SAMPLES ?? 100);
const ROUNDS = 5;
/** main before the query-vector cache and the early embedding (issue 13's search pass); BENCH_BASELINE_REF overrides. */
const BASELINE = process.env.BENCH_BASELINE_REF ?? '9c24028';
const END = Date.UTC(2026, 10, 1);
const log = (...a) => console.log(new Date().toISOString().slice(11, 19), ...a);
const enc = encodeURIComponent;

/** Texts never sent before, enough for every request of a case: ROUNDS × N indices apart (see timeAlternating). */
function unseenQueries() {
  const perQuery = Math.ceil((ROUNDS * N) / QUERIES.length) + 1;
  const list = [];
  for (let k = 1; k <= perQuery; k++) for (const q of QUERIES) list.push(variant(q, k));
  if (new Set(list).size !== list.length)
    throw new Error('query variants repeat: too few casings and marks for BENCH_SAMPLES');
  return { queries: list.slice(QUERIES.length), warm: list[0] };
}

/** Vectors in the seeded database (its largest D1 file), by the sqlite3 shell; null without one. */
function countVectors(state) {
  try {
    const dir = path.join(state, 'v3', 'd1', 'miniflare-D1DatabaseObject');
    const [file] = readdirSync(dir)
      .filter((f) => f.endsWith('.sqlite'))
      .map((f) => path.join(dir, f))
      .sort((a, b) => statSync(b).size - statSync(a).size);
    return Number(
      execFileSync('sqlite3', ['-readonly', file, 'SELECT count(*) FROM local_vectors'], { encoding: 'utf8' }).trim(),
    );
  } catch {
    return null;
  }
}

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
  let embedded = 0;
  while (embedded < EMBEDDED) {
    const out = JSON.parse(await api(srv, 'POST', '/api/admin/backfill-vectors?limit=250'));
    embedded += out.indexed;
    if (out.indexed === 0) break;
  }
}

const base = checkoutBaseline(BASELINE);
const work = mkdtempSync(path.join(tmpdir(), 'cairn-search-teamwide-'));
const builds = [];
try {
  // Embedding the rows is most of the run (0.1–0.6 s a row on this box, by its load): BENCH_SEARCH_STATE names a
  // database this bench (or bench/search/profile.mjs, same rows) seeded before, served as it is.
  const seeded = process.env.BENCH_SEARCH_STATE ?? path.join(work, 'seeded');
  const t = Date.now();
  if (!process.env.BENCH_SEARCH_STATE) {
    const seeder = await startBenchServer(await freePort(), {}, { embedder: true, persistTo: seeded });
    try {
      await fill(seeder);
    } finally {
      await seeder.stop();
    }
  }
  const embedded = countVectors(seeded);
  log(`seeded ${ROWS}, embedded ${embedded} in ${((Date.now() - t) / 1000).toFixed(0)} s`);
  for (const name of ['before', 'after']) cpSync(seeded, path.join(work, name), { recursive: true });
  builds.push({
    name: `before (${base.commit})`,
    srv: await startBenchServer(
      await freePort(),
      {},
      { root: base.root, embedder: true, persistTo: path.join(work, 'before') },
    ),
  });
  // This tree as `npm start` runs it: with the local sentence model (scripts/sentence-embedder.mjs) beside it.
  builds.push({
    name: 'after (this tree)',
    srv: await startBenchServer(await freePort(), {}, { embedder: true, persistTo: path.join(work, 'after') }),
  });
  const cases = [
    ['search FTS, whole team', (q) => `/api/search?q=${enc(q)}&mode=fts`],
    ['search hybrid, whole team', (q) => `/api/search?q=${enc(q)}`, unseenQueries()],
    ['search hybrid, whole team, repeated queries', (q) => `/api/search?q=${enc(q)}`],
  ];
  const times = await timeAlternating(builds, cases, QUERIES, N, ROUNDS);
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
      `Local \`wrangler dev\`, ${ROWS.toLocaleString('en')} synthetic observations in ${PROJECTS} projects of one team, the newest ${embedded?.toLocaleString('en') ?? '?'} embedded`,
      '(a team-wide hybrid query scans at most the newest 5,000 vectors) by the local sentence model; both builds serve a',
      `copy of the same database, each with its own checkout's model service, sampled in ${ROUNDS} alternating rounds,`,
      `${N} requests per case and build, ${QUERIES.length} phrase queries (the common-word worst case). "search hybrid, whole team"`,
      'sends query texts neither build has seen (new casings and trailing marks of the 12, read alike by keyword search),',
      'so no cache of query vectors helps it; "repeated queries" sends the 12 as they are, again and again.',
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
  rmSync(work, { recursive: true, force: true });
}
process.exit(0);
