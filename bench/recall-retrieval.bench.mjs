// Retrieval quality on public sets nobody here wrote (plus our own set as a regression check): recall@5,
// recall@10 and MRR for a plain SQLite FTS5 script, `mode=fts` and the default search, all in the same run,
// through the real HTTP API of a local wrangler dev with the local sentence model beside it (as `npm start` runs:
// every seeded record is embedded by the backfill before any question). Writes the "recall-retrieval" section of
// BENCHMARKS.md and FAILS when the default's recall@10 trails `mode=fts` on any set.
//
// Public sets are read at run time from repository snapshots the developer points at (never downloaded here):
//   CAIRN_BENCH_REALTALK=<git dir of github.com/danny911kr/REALTALK>
//   CAIRN_BENCH_CHANGESETS=<git dir of github.com/honojs/middleware>
// A set whose snapshot is missing is reported as skipped. BENCH_SETS=own,realtalk limits the run.
// BENCH_DUMP=/tmp/x writes each set's questions and ranked keys to /tmp/x-<set>.json (per-question diffs). The plain
// baseline runs under python3 (its sqlite3 module, built with FTS5 on Debian).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { freePort, ROOT } from '../scripts/dev-server.mjs';
import { api, backfillAll, seed, startBenchServer, writeSection } from './retrieval/harness.mjs';
import { summarise } from './retrieval/metrics.mjs';
import * as changesets from './retrieval/sets/changesets.mjs';
import * as own from './retrieval/sets/own.mjs';
import * as realtalk from './retrieval/sets/realtalk.mjs';

const SETS = [
  {
    id: 'realtalk',
    mod: realtalk,
    title: 'REALTALK (conversational memory)',
    source: 'github.com/danny911kr/REALTALK, data/Chat_*.json',
    license: 'no license file in the repository; read at run time, not committed',
  },
  {
    id: 'changesets',
    mod: changesets,
    title: 'honojs/middleware release notes → commits (developer history)',
    source: 'github.com/honojs/middleware, packages/*/CHANGELOG.md + git log',
    license: 'MIT; read at run time, not committed',
  },
  {
    id: 'own',
    mod: own,
    title: 'own set (regression check only)',
    source: 'bench/retrieval/set.json',
    license: 'ours',
  },
];
const only = (process.env.BENCH_SETS ?? '').split(',').filter(Boolean);
const oneLine = (s, n) => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length <= n ? t : `${t.slice(0, n - 1)}…`;
};

/** What the plain script indexes for an observation: the same text cairn stores, once. */
const docText = (o) => o.text ?? [o.title, o.narrative, ...(o.facts ?? [])].filter(Boolean).join('\n');

function baseline(set) {
  const docs = set.projects.flatMap((p) =>
    p.observations.map((o) => ({ key: o.key, project: p.key, text: docText(o) })),
  );
  const r = spawnSync('python3', [path.join(ROOT, 'bench/retrieval/fts5-baseline.py')], {
    input: JSON.stringify({ docs, queries: set.queries.map((q) => ({ q: q.q, project: q.project })) }),
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`fts5-baseline.py failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** Seeds a set the way `remember` stores text (title = first line, narrative = text), one session per project. */
async function seedSet(srv, set) {
  const keyById = new Map();
  for (const p of set.projects) {
    const obs = p.observations.map((o) => ({
      type: o.type ?? 'discovery',
      title: o.title ?? oneLine(o.text, 80),
      narrative: o.narrative ?? o.text,
      facts: o.facts ?? [],
      concepts: o.concepts ?? [],
      files_modified: o.files ?? [],
      created_at: o.created_at,
    }));
    const ids = await seed(srv, p.key, `bench-${p.key}`, obs);
    for (const [j, id] of ids.entries()) keyById.set(id, p.observations[j].key);
  }
  return keyById;
}

async function runMode(srv, set, keyById, mode) {
  const runs = [];
  const modes = new Set();
  // Questions without a project search every project of their own set (never other sets' records).
  const all = set.projects.map((p) => p.key).join(',');
  for (const q of set.queries) {
    const params = new URLSearchParams({ q: q.q, limit: '10', project: q.project ?? all });
    if (mode) params.set('mode', mode);
    const body = JSON.parse(await api(srv, 'GET', `/api/search?${params}`));
    modes.add(body.mode);
    runs.push({ kind: q.kind, expected: q.expected, ranked: body.results.map((r) => keyById.get(r.id) ?? '?') });
  }
  return { runs, modes: [...modes] };
}

const f = (x) => x.toFixed(3);
// CAIRN_VECTOR_WEIGHT=<0–1> replays the run with the vector channel weighted so (weight sweeps).
const weightVar = process.env.CAIRN_VECTOR_WEIGHT ? { CAIRN_VECTOR_WEIGHT: process.env.CAIRN_VECTOR_WEIGHT } : {};
// The local stack as `npm start` runs it: the sentence model beside wrangler dev (CAIRN_EMBEDDER=off: without).
const srv = await startBenchServer(Number(process.env.BENCH_PORT ?? (await freePort())), weightVar, {
  embedder: process.env.CAIRN_EMBEDDER !== 'off',
});
const sections = [];
const failures = [];
try {
  for (const s of SETS.filter((x) => only.length === 0 || only.includes(x.id))) {
    const set = s.mod.load();
    if (set.skipped) {
      console.warn(`\n!!! ${s.id}: SKIPPED — ${set.skipped}`);
      sections.push(`### ${s.title}\n\nSkipped in this run: ${set.skipped}.`);
      continue;
    }
    const t0 = Date.now();
    const keyById = await seedSet(srv, set);
    await backfillAll(srv);
    const script = baseline(set).map((ranked, i) => ({
      expected: set.queries[i].expected,
      ranked,
      kind: set.queries[i].kind,
    }));
    const fts = await runMode(srv, set, keyById, 'fts');
    const dflt = await runMode(srv, set, keyById, null);
    if (process.env.BENCH_DUMP)
      (await import('node:fs')).writeFileSync(
        `${process.env.BENCH_DUMP}-${s.id}.json`,
        JSON.stringify({ q: set.queries.map((x) => x.q), fts: fts.runs, dflt: dflt.runs }),
      );
    const rows = [
      ['plain FTS5 script (porter, bm25, OR of non-stopword terms)', summarise(script)],
      ['cairn `mode=fts`', summarise(fts.runs)],
      [`cairn default (answered as: ${dflt.modes.join(', ')})`, summarise(dflt.runs)],
    ];
    const docs = set.projects.reduce((n, p) => n + p.observations.length, 0);
    const table = rows.map(([name, m]) => `| ${name} | ${f(m.recall5)} | ${f(m.recall10)} | ${f(m.mrr)} |`).join('\n');
    sections.push(`### ${s.title}

Source: ${s.source}. License: ${s.license}. ${docs} records in ${set.projects.length} project(s), ${set.queries.length} questions.

| search | R@5 | R@10 | MRR |
|---|---|---|---|
${table}`);
    const kinds = [...new Set(set.queries.map((q) => q.kind))];
    if (kinds.length > 1) {
      for (const k of kinds) {
        const pick = (runs) => runs.filter((r) => r.kind === k);
        const [a, b, c] = [summarise(pick(script)), summarise(pick(fts.runs)), summarise(pick(dflt.runs))];
        console.log(
          `  ${s.id} ${k} (n=${a.queries}): R@10 script ${f(a.recall10)} fts ${f(b.recall10)} default ${f(c.recall10)}`,
        );
      }
    }
    console.log(`${sections.at(-1)}\n(${((Date.now() - t0) / 1000).toFixed(0)} s)`);
    const [fr, dr] = [rows[1][1].recall10, rows[2][1].recall10];
    if (dr + 1e-9 < fr) failures.push(`${s.id}: default recall@10 ${f(dr)} < mode=fts ${f(fr)}`);
  }
  const md = `## Retrieval quality (\`npm run bench\` → bench/recall-retrieval.bench.mjs)

Every figure below comes from one run: the same records seeded through the local-only bench route (each as one
observation, stored the way MCP \`remember\` stores text), each question sent to \`GET /api/search?limit=10\`
(scoped to its project) with \`mode=fts\` and with no mode (the default), and the same records and questions
given to a plain SQLite FTS5 script (bench/retrieval/fts5-baseline.py). R@k: share of a question's evidence
records in the top k, averaged; MRR: reciprocal rank of the first evidence record. The bench fails when the
default's R@10 trails \`mode=fts\` on any set. Public sets are read from repository snapshots at run time
(see the bench file's header); nothing of them is committed.

${sections.join('\n\n')}

Run at ${new Date().toISOString()}.`;
  // A sweep run is for the console only; the committed table is the configured default.
  if (!process.env.CAIRN_VECTOR_WEIGHT && only.length === 0) writeSection('recall-retrieval', md);
} finally {
  await srv.stop();
}
if (failures.length) {
  console.error(`\n!!! RETRIEVAL REGRESSION: the default search trails keyword search:\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
