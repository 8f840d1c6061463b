// The hold-back's classifier (src/shared/instructions.ts) runs inside every insert of an observation, summary and
// prompt. This measures its cost on public changelog text (the fixtures of test/node/trust) and on one text of the
// classifier's whole head (20,000 characters), this tree against a baseline commit bundled in the same run,
// alternating rounds so both see the same machine load. Writes the "classifier" section of BENCHMARKS.md.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { writeSection } from './retrieval/harness.mjs';
import { ROOT } from '../scripts/dev-server.mjs';

/** Before spelled-out letters and base64 were read (the commit this bench came with builds on it). */
const BASELINE = process.env.BENCH_CLASSIFIER_REF ?? 'd420005';
const ROUNDS = 7;

const dir = mkdtempSync(path.join(tmpdir(), 'cairn-classifier-'));
try {
  const commit = execFileSync('git', ['rev-parse', '--short', BASELINE], { cwd: ROOT, encoding: 'utf8' }).trim();
  for (const f of ['instructions.ts', 'fence.ts'])
    writeFileSync(path.join(dir, f), execFileSync('git', ['show', `${commit}:src/shared/${f}`], { cwd: ROOT }));
  const bundle = async (entry, name) => {
    const outfile = path.join(dir, `${name}.mjs`);
    await build({ entryPoints: [entry], bundle: true, format: 'esm', outfile, logLevel: 'error' });
    return (await import(pathToFileURL(outfile).href)).classifyInstructions;
  };
  const before = await bundle(path.join(dir, 'instructions.ts'), 'before');
  const after = await bundle(path.join(ROOT, 'src/shared/instructions.ts'), 'after');
  const texts = readFileSync(path.join(ROOT, 'test/node/trust/fixtures/changelog-entries.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l).text);
  const head = texts.join('\n').slice(0, 20_000);
  const time = (f, inputs, reps) => {
    const t0 = performance.now();
    for (let r = 0; r < reps; r++) for (const t of inputs) f(t);
    return (performance.now() - t0) / reps;
  };
  const runs = { before: { short: [], long: [] }, after: { short: [], long: [] } };
  for (const f of [before, after, before, after]) time(f, texts, 1);
  for (let i = 0; i < ROUNDS; i++)
    for (const [k, f] of i % 2
      ? [
          ['after', after],
          ['before', before],
        ]
      : [
          ['before', before],
          ['after', after],
        ]) {
      runs[k].short.push(time(f, texts, 3));
      runs[k].long.push(time(f, [head], 30));
    }
  const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
  const row = (what, b, a, unit) =>
    `| ${what} | ${b.toFixed(unit === 'µs' ? 1 : 2)} ${unit} | ${a.toFixed(unit === 'µs' ? 1 : 2)} ${unit} | ${(a / b).toFixed(2)} |`;
  const perEntry = (ms) => (ms * 1000) / texts.length;
  const table = [
    `| text | before (${commit}) | after | after/before |`,
    '|---|---|---|---|',
    row(
      `one changelog entry (mean of ${texts.length.toLocaleString('en-US')})`,
      perEntry(med(runs.before.short)),
      perEntry(med(runs.after.short)),
      'µs',
    ),
    row('one 20,000-character text', med(runs.before.long), med(runs.after.long), 'ms'),
  ].join('\n');
  console.log(table);
  writeSection(
    'classifier',
    `## Hold-back classifier\n\n\`node bench/classifier.bench.mjs\`: \`classifyInstructions\` (run inside every insert of an observation, summary and prompt) on the public changelog fixtures and on one text of its whole 20,000-character head, this tree against ${commit} bundled in the same run, ${ROUNDS} alternating rounds, medians. Run at ${new Date().toISOString()} on this 2-core machine, shared with other work. The after column also joins spelled-out letters back into words and decodes up to 8 base64 runs (4,096 characters) a text.\n\n${table}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
