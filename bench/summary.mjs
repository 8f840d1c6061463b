// The issue-13 table (`npm run bench` prints it last and writes the "issue13-summary" section of BENCHMARKS.md):
// the figures each bench wrote into its own section, side by side. Each row is one section's same-run
// comparison (baseline commit against this tree); a section not run yet shows as "not measured".
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** The text between `<!-- name:start -->` and `<!-- name:end -->`, or ''. */
export function section(doc, name) {
  const a = doc.indexOf(`<!-- ${name}:start -->`);
  const b = doc.indexOf(`<!-- ${name}:end -->`);
  return a >= 0 && b > a ? doc.slice(a, b) : '';
}

/** The cells of the first table row whose first cell starts with `first` (markdown emphasis removed), or null. */
export function row(text, first) {
  for (const line of text.split('\n')) {
    if (!line.startsWith('|')) continue;
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim().replaceAll('**', ''));
    if (cells[0]?.startsWith(first)) return cells;
  }
  return null;
}

/** `before (450aca0)` → `450aca0: `; the after column needs no name. */
const label = (name) => (/^before \(([^)]+)\)/.exec(name)?.[1] ?? '').replace(/.+/, '$&: ');

const when = (text) => /Run at (\S+?)[.\s(]/.exec(text)?.[1]?.slice(0, 16).replace('T', ' ') ?? '?';

/** The issue-13 table as markdown, from the document's bench sections. */
export function issue13Table(doc) {
  const out = [];
  const add = (what, before, after, goal, run) =>
    out.push(`| ${what} | ${before ?? 'not measured'} | ${after ?? 'not measured'} | ${goal} | ${run} |`);

  const hooks = section(doc, 'hooks-client');
  const hook = row(hooks, 'sh -c \'node "…/cairn.cjs" hook post-tool-use\'');
  const sending = row(hooks, "sh -c '… hook post-tool-use' with CAIRN_SENDER=off");
  const floor = row(hooks, 'node -e: one raw node:net request');
  add(
    'post-tool-use as `cairn install` writes it vs `node -e 0`, CPU p50 (wall p50)',
    sending && `the hook sends itself (CAIRN_SENDER=off, same run): ${sending[5]} (${sending[3]})`,
    hook && `quick path + background sender: ${hook[5]} (${hook[3]}); node:net floor ${floor?.[5] ?? '?'}`,
    '≤ 1.3×',
    when(hooks),
  );

  const pipe = section(doc, 'pipeline');
  const ingest = (r) => r && `${label(r[0])}throughput ${r[3]}, p50 ${r[6]} (${r[2]} req/s, ${r[5]} ms)`;
  // The floor of any ingest request here (one empty SessionDO round trip, same run) is what the goal is read against.
  const pipeFloor = row(pipe, 'after: floor');
  const after = ingest(row(pipe, 'after (this tree)'));
  const afterWithFloor =
    after && pipeFloor ? `${after}; floor (an empty SessionDO round trip) ${pipeFloor[3]}, p50 ${pipeFloor[6]}` : after;
  add(
    'ingest, 8 clients, one session, vs `GET /api/health`',
    ingest(row(pipe, 'before (')),
    afterWithFloor,
    'throughput ≥ 0.6×, p50 ≤ 2×',
    when(pipe),
  );

  const search = section(doc, 'search-teamwide');
  const searchRow = (route, build) => {
    for (const line of search.split('\n')) {
      const cells = line
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim());
      if (cells[0] === route && cells[1]?.startsWith(build)) return cells;
    }
    return null;
  };
  // The goal's figure is hybrid with queries the build has not seen; repeated queries and keyword search alone
  // (the floor the vector side adds to) follow it, from the same run, where the section has them.
  const hybrid = (build) => {
    const cold = searchRow('search hybrid, whole team', build);
    if (!cold) return null;
    const warm = searchRow('search hybrid, whole team, repeated queries', build);
    const fts = searchRow('search FTS, whole team', build);
    const extra = [warm && `repeated queries p95 ${warm[3]}`, fts && `FTS alone p95 ${fts[3]}`]
      .filter(Boolean)
      .join(', ');
    return `${label(cold[1])}p95 ${cold[3]} ms (p50 ${cold[2]})${extra ? `; ${extra}` : ''}`;
  };
  add(
    'team-wide hybrid search, 100k rows (local)',
    hybrid('before ('),
    hybrid('after (this tree)'),
    'p95 ≤ 100 ms',
    when(search),
  );

  const cold = section(doc, 'cold-start');
  const bundle = (r) => r && `${label(r[0])}${r[1]} raw, ${r[2]} gzip, start ${r[3]} ms CPU`;
  add(
    'production bundle',
    bundle(row(cold, 'before (')),
    bundle(row(cold, 'after (this tree)')),
    '≤ 1 MB raw or a measured start',
    when(cold),
  );

  return [
    "| what | before (the section's baseline commit) | after (this tree) | goal | section run at (UTC) |",
    '|---|---|---|---|---|',
    ...out,
  ].join('\n');
}

if (process.argv[1] && pathToFileURL(path.resolve(process.argv[1])).href === import.meta.url) {
  const { ROOT } = await import('../scripts/dev-server.mjs');
  const { writeSection } = await import('./retrieval/harness.mjs');
  const table = issue13Table(readFileSync(path.join(ROOT, 'BENCHMARKS.md'), 'utf8'));
  console.log(`\nIssue 13, from the sections of BENCHMARKS.md:\n${table}`);
  writeSection(
    'issue13-summary',
    [
      '### Issue 13 at a glance (`npm run bench` prints this last; bench/summary.mjs reads it from the sections below)',
      '',
      table,
    ].join('\n'),
  );
}
