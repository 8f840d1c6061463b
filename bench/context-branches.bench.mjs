// What branch-aware ranking costs the server (issue 24): GET /api/context with the caller's checkout (branch, head,
// trunk, 200 history commits: twice the rows read, then judged) against the same request without it (today's), on
// 2,000 observations of one project, interleaved in the same run. Writes the "context-branches" section.
import { freePort } from '../scripts/dev-server.mjs';
import { percentile, seed, startBenchServer, writeSection } from './retrieval/harness.mjs';
import { observationsFor } from './retrieval/synthetic.mjs';

const N = Number(process.env.BENCH_SAMPLES ?? 60);
const KEY = 'github.com/bench/branches';
const srv = await startBenchServer(Number(process.env.BENCH_PORT ?? (await freePort())));
try {
  await seed(
    srv,
    KEY,
    'bench-branches',
    observationsFor(0, 0, 2_000, Date.UTC(2026, 10, 1)).map(({ symbol, ...o }) => o),
  );
  const hex = (i) => i.toString(16).padStart(12, '0');
  const view = new URLSearchParams({
    branch: 'feature-y',
    head: 'f'.repeat(40),
    trunk: 'main',
    history: Array.from({ length: 200 }, (_, i) => hex(i + 1)).join(','),
  });
  const cases = {
    'GET /api/context, no checkout (today)': `/api/context?project=${encodeURIComponent(KEY)}`,
    'GET /api/context with branch, head, trunk, 200 history commits': `/api/context?project=${encodeURIComponent(KEY)}&${view}`,
  };
  const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  const chars = {};
  for (let i = 0; i < N + 5; i++) {
    const order = Object.entries(cases);
    if (i % 2) order.reverse();
    for (const [name, path] of order) {
      const t = performance.now();
      const res = await fetch(`${srv.url}${path}`, { headers: { authorization: `Bearer ${srv.token}` } });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${name}: ${res.status} ${text.slice(0, 200)}`);
      if (i >= 5) times[name].push(performance.now() - t);
      chars[name] = text.length;
    }
  }
  const p = (xs, q) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      q,
    );
  const [today, withView] = Object.keys(cases);
  const rows = Object.entries(times).map(
    ([name, xs]) => `| ${name} | ${p(xs, 50).toFixed(1)} | ${p(xs, 95).toFixed(1)} | ${chars[name]} |`,
  );
  const md = `## Branch-aware memory: what the server pays (\`npm run bench context-branches\` → bench/context-branches.bench.mjs)

\`wrangler dev --local\`, 2,000 observations in one project (rows without git fields, so every row is judged and
none is unmerged: the cost of reading and judging twice the rows, not of marking), ${N} requests each, alternating.

| case | p50 ms | p95 ms | answer chars |
|---|---|---|---|
${rows.join('\n')}

With the checkout vs without: **${(p(times[withView], 50) / p(times[today], 50)).toFixed(2)}× p50**, ${(p(times[withView], 95) / p(times[today], 95)).toFixed(2)}× p95.
`;
  writeSection('context-branches', md);
  console.log(md);
} finally {
  await srv.stop();
}
