// Retrieval quality on the committed set: recall@5, recall@10 and MRR for FTS alone and hybrid, through the
// real HTTP API of a local wrangler dev. Writes the "recall-retrieval" section of BENCHMARKS.md.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../scripts/dev-server.mjs';
import { api, backfillAll, seed, startBenchServer, writeSection } from './retrieval/harness.mjs';
import { summarise } from './retrieval/metrics.mjs';

const set = JSON.parse(readFileSync(path.join(ROOT, 'bench/retrieval/set.json'), 'utf8'));
const srv = await startBenchServer(Number(process.env.BENCH_PORT ?? 8791));
try {
  const keyById = new Map();
  const t0 = Date.UTC(2026, 5, 1);
  const byProject = new Map();
  set.observations.forEach((o, i) => {
    if (!byProject.has(o.project)) byProject.set(o.project, []);
    byProject.get(o.project).push({ o, i });
  });
  for (const [project, items] of byProject) {
    const ids = await seed(
      srv,
      project,
      `retrieval-${project}`,
      items.map(({ o, i }) => ({
        type: o.type, title: o.title, narrative: o.narrative, facts: o.facts, concepts: o.concepts, files_modified: o.files, created_at: t0 + i * 60_000,
      })),
    );
    ids.forEach((id, j) => {
      keyById.set(id, items[j].o.key);
    });
  }
  await backfillAll(srv);

  const run = async (mode) => {
    const runs = [];
    for (const q of set.queries) {
      const body = JSON.parse(await api(srv, 'GET', `/api/search?q=${encodeURIComponent(q.q)}&limit=10&mode=${mode}`));
      runs.push({ kind: q.kind, expected: q.expected, ranked: body.results.map((r) => keyById.get(r.id) ?? '?'), mode: body.mode });
    }
    return runs;
  };
  const fts = await run('fts');
  const hybrid = await run('hybrid');
  if (hybrid.some((r) => r.mode !== 'hybrid')) throw new Error('hybrid search fell back to FTS during the benchmark');

  const kinds = ['all', ...new Set(set.queries.map((q) => q.kind))];
  const pick = (runs, kind) => (kind === 'all' ? runs : runs.filter((r) => r.kind === kind));
  const f = (x) => x.toFixed(3);
  const rows = kinds.map((k) => {
    const a = summarise(pick(fts, k));
    const b = summarise(pick(hybrid, k));
    return `| ${k} | ${a.queries} | ${f(a.recall5)} | ${f(b.recall5)} | ${f(a.recall10)} | ${f(b.recall10)} | ${f(a.mrr)} | ${f(b.mrr)} |`;
  });
  const md = `## Retrieval quality (\`npm run bench\` → bench/recall-retrieval.bench.mjs)

Set: \`bench/retrieval/set.json\` — ${set.observations.length} observations in 4 projects (English, Chinese, Japanese),
${set.queries.length} queries with the ids that answer them. Served by \`wrangler dev --local\` through \`GET /api/search\`
(\`mode=fts\` vs default hybrid). Vector side here is the **local** stack: the D1 index and the offline embedder
(hashed word/trigram features + a ~50-group coding thesaurus incl. a few CJK entries, 256 dims) — not a neural model.
Production uses bge-m3, which this box cannot run; expect different (likely better) paraphrase numbers there.

| queries | n | R@5 FTS | R@5 hybrid | R@10 FTS | R@10 hybrid | MRR FTS | MRR hybrid |
|---|---|---|---|---|---|---|---|
${rows.join('\n')}

Run at ${new Date().toISOString()}.`;
  writeSection('recall-retrieval', md);
  console.log(md);
} finally {
  await srv.stop();
}
