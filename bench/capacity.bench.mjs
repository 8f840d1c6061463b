// Bytes per observation in D1 (the row, its FTS5 index entries and its file rows), measured as the growth of
// the local database while seeding synthetic observations (bench/retrieval/synthetic.mjs), and what that means
// for one 10 GB D1 database. Vectors are not counted: production keeps them in Vectorize (locally they sit in
// local_vectors, which this bench never fills). Writes the "capacity" section of BENCHMARKS.md.
import { api, seed, startBenchServer, writeSection } from './retrieval/harness.mjs';
import { observationsFor } from './retrieval/synthetic.mjs';
import { freePort } from './baseline.mjs';

const ROWS = Number(process.env.BENCH_CAPACITY_ROWS ?? 100_000);
const PROJECTS = 20;
const STEPS = 5;
const END = Date.UTC(2026, 10, 1);
const log = (...a) => console.log(new Date().toISOString().slice(11, 19), ...a);
const size = async (srv) => JSON.parse(await api(srv, 'GET', '/api/admin/bench/size'));

const srv = await startBenchServer(await freePort());
try {
  const points = [await size(srv)];
  let sample = null;
  const perStep = ROWS / STEPS / PROJECTS;
  for (let step = 0; step < STEPS; step++) {
    for (let p = 0; p < PROJECTS; p++) {
      const batch = observationsFor(p, step * perStep, perStep, END).map(({ symbol, ...o }) => o);
      sample ??= batch[0];
      await seed(srv, `github.com/capacity/project-${p}`, `capacity-${p}-${step}`, batch);
    }
    points.push(await size(srv));
    log(points.at(-1));
  }
  const first = points[0];
  const last = points.at(-1);
  const perRow = (last.bytes - first.bytes) / (last.observations - first.observations);
  const text = JSON.stringify(sample);
  const GB10 = 10 * 1024 ** 3;
  const rows10 = Math.floor(GB10 / perRow);
  const rates = [
    ['one developer, light use', 1, 100],
    ['10 developers', 10, 200],
    ['50 developers', 50, 200],
    ['200 developers', 200, 300],
  ];
  const md = [
    '## Capacity: bytes per observation (`npm run bench` → bench/capacity.bench.mjs)',
    '',
    `Local D1 (SQLite), ${last.observations.toLocaleString('en')} synthetic observations in ${PROJECTS} projects, seeded in ${STEPS} steps;`,
    'each with its FTS5 index entries (title, subtitle, narrative, facts, concepts, CJK terms, scope tokens) and its',
    `file rows. A sample observation is ${text.length} characters of JSON (title, narrative, facts, concepts, files).`,
    '',
    '| observations | database bytes | bytes per observation since the start |',
    '|---|---|---|',
    ...points
      .slice(1)
      .map(
        (p) =>
          `| ${p.observations.toLocaleString('en')} | ${p.bytes.toLocaleString('en')} | ${((p.bytes - first.bytes) / (p.observations - first.observations)).toFixed(0)} |`,
      ),
    '',
    `**${perRow.toFixed(0)} bytes per observation** → one 10 GB D1 database holds about **${(rows10 / 1e6).toFixed(1)} million observations**.`,
    '',
    '| team | observations per developer per working day | years to fill 10 GB (observations only, 220 working days a year) |',
    '|---|---|---|',
    ...rates.map(([name, devs, perDay]) => `| ${name} | ${perDay} | ${(rows10 / (devs * perDay * 220)).toFixed(1)} |`),
    '',
    'See docs/capacity.md for what else takes room (prompts, summaries, audit log) and how teams are spread over several D1 databases (src/db/shards.ts).',
    '',
    `Run at ${new Date().toISOString()}.`,
  ].join('\n');
  writeSection('capacity', md);
  log(`${perRow.toFixed(0)} bytes per observation; wrote the capacity section of BENCHMARKS.md`);
} finally {
  await srv.stop();
}
process.exit(0);
