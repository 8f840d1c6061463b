// Evidence on history nobody here wrote (issue 34): replays a public repository's real commits. For each commit of a
// window (first parent), a record is made at that commit from the files it touched: their blob ids then (and before
// it, for a changed file), and the names an observer would cite (the commit's subject and the identifiers its added
// lines define). Then the checkout moves forward to a later commit and every record is judged there with cairn's own
// code: the client's report of the files (hooks-client/src/hook/checkout.ts checkoutEntries, which reads the files
// and looks the names up) and the server's rule (src/shared/evidence.ts judgeEvidence). Against the diffs: a record
// became wrong when a line its commit added to a cited file no longer survives at the later commit (`git blame -w`:
// whitespace-only changes do not count, as cairn decided) or the file is gone. Reports recall (wrong records
// marked) and precision (marked records that are wrong), and prints a sample to read by hand.
//
//   CAIRN_REPLAY_REPO=/path/to/a/git/dir npm run bench evidence-replay
//
// The repository is read from the path given (a clone or a bare git dir); nothing is fetched and nothing of it is
// committed here. Without CAIRN_REPLAY_REPO the bench says so and does nothing. BENCH_REPLAY_FROM / _COMMITS /
// _AHEAD pick the window (defaults: records from the 200 commits that end 60 commits before the tip, judged at the tip).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { writeSection } from './retrieval/harness.mjs';

const REPO = process.env.CAIRN_REPLAY_REPO;
if (!REPO) {
  console.log(
    'evidence-replay: set CAIRN_REPLAY_REPO to a git repository (a clone or bare git dir) to run it; skipped.',
  );
  process.exit(0);
}
const COMMITS = Number(process.env.BENCH_REPLAY_COMMITS ?? 200);
const AHEAD = Number(process.env.BENCH_REPLAY_AHEAD ?? 60);
const MAX_FILES = 20;
const SAMPLE = 12;

const git = (...args) =>
  execFileSync('git', ['--git-dir', REPO, ...args], {
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
const gitText = (...args) => git(...args).toString();

// cairn's own code, bundled from its source: the judge, the names rule, the client's checkout report and ids.
const entry = `
export { judgeEvidence, evidenceNote } from '#shared/evidence';
export { namesIn, isPathName } from '#shared/names';
export { checkoutEntries } from './hooks-client/src/hook/checkout.ts';
export { wsIdOfBytes } from './hooks-client/src/project/blob-id.ts';
`;
const bundled = await build({
  stdin: { contents: entry, resolveDir: path.resolve('.'), loader: 'ts' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  write: false,
  external: ['node:*'],
});
const cairn = await import(
  `data:text/javascript;base64,${Buffer.from(bundled.outputFiles[0].text).toString('base64')}`
);

const all = gitText('rev-list', '--first-parent', '--reverse', 'HEAD').trim().split('\n');
const end = all.length - 1 - AHEAD;
const from = Number(process.env.BENCH_REPLAY_FROM ?? Math.max(1, end - COMMITS + 1));
const window = all.slice(from, end + 1);
const target = all.at(-1);
const name = path.basename(REPO.replace(/\/(repo|\.git)\/?$/, '')) || REPO;

/** What a commit touched: files added or changed (not deleted, not binary), with their added line counts. */
function touched(commit) {
  const out = [];
  for (const line of gitText('diff', '--numstat', '--no-renames', `${commit}^`, commit).trim().split('\n')) {
    const [add, , file] = line.split('\t');
    if (!file || add === '-') continue;
    const exists = gitText('ls-tree', commit, '--', file).trim();
    if (exists) out.push({ path: file, added: Number(add) });
  }
  return out.slice(0, MAX_FILES);
}

const DEFINES =
  /(?:function\*?|const|let|var|class|interface|type|enum|def)\s+([A-Za-z_$][\w$]*)|^\s*(?:async\s+)?([a-z_$][\w$]*)\s*\([^)]*\)\s*\{/gm;
/** The identifiers the commit's added lines define (what an observer of that work would name). */
function defined(commit) {
  const added = gitText('diff', '--unified=0', '--no-renames', `${commit}^`, commit)
    .split('\n')
    .filter((l) => l.startsWith('+') && !l.startsWith('+++'))
    .map((l) => l.slice(1))
    .join('\n');
  const out = new Set();
  for (const m of added.matchAll(DEFINES)) {
    const id = m[1] ?? m[2];
    if (id && !['if', 'for', 'while', 'switch', 'catch', 'function', 'return'].includes(id)) out.add(id);
    if (out.size >= 5) break;
  }
  return [...out];
}

const blobAt = (commit, file) => {
  try {
    return gitText('rev-parse', `${commit}:${file}`).trim();
  } catch {
    return null;
  }
};

// The records.
const records = [];
for (const commit of window) {
  const files = touched(commit);
  if (!files.length) continue;
  const subject = gitText('log', '-1', '--format=%s', commit).trim();
  const idents = defined(commit);
  const text = `${subject}. ${idents.length ? `It defines ${idents.map((i) => `\`${i}\``).join(', ')}.` : ''}`;
  records.push({
    commit,
    subject,
    text,
    names: cairn.namesIn([subject, text]),
    files: files.map((f) => ({
      path: f.path,
      added: f.added,
      blob: blobAt(commit, f.path),
      base: blobAt(`${commit}^`, f.path),
      ws: cairn.wsIdOfBytes(git('show', `${commit}:${f.path}`)),
    })),
  });
}

// The checkout moved forward: the target commit's files in a plain folder (git archive: no work tree is touched).
const checkout = mkdtempSync(path.join(tmpdir(), 'cairn-replay-'));
execFileSync('sh', ['-c', `git --git-dir "${REPO}" archive ${target} | tar -x -C "${checkout}"`]);

// The watch the server would send (src/evidence/checkout.ts watchOf, no bound here: every record is judged).
const watch = new Map();
for (const r of records) {
  const idents = r.names.filter((n) => !cairn.isPathName(n));
  for (const f of r.files) watch.set(f.path, [...new Set([...(watch.get(f.path) ?? []), ...idents])].slice(0, 16));
  for (const n of r.names) if (cairn.isPathName(n) && !watch.has(n)) watch.set(n, []);
}
const entries = cairn.checkoutEntries(
  { root: checkout, commonDir: path.join(checkout, '.no-git') },
  { files: [...watch].map(([p, names]) => ({ path: p, names })), branches: [] },
  { watch: { files: [], branches: [] }, acked: null, files: {}, branches: [] },
);

/** Ground truth from the diffs: does every line the commit added to the file survive at the target? */
function survives(commit, file, added) {
  if (!blobAt(target, file)) return { ok: false, why: 'file gone' };
  if (added === 0) return { ok: true, why: 'no added lines' };
  if (!gitText('log', '--format=%H', `${commit}..${target}`, '--', file).trim())
    return { ok: true, why: 'not touched since' };
  const blame = gitText('blame', '-w', '--porcelain', target, '--', file);
  const kept = blame.split('\n').filter((l) => l.startsWith(`${commit} `)).length;
  return kept >= added
    ? { ok: true, why: 'its lines survive' }
    : { ok: false, why: `${added - kept}/${added} of its lines changed` };
}

let wrong = 0;
let marked = 0;
let both = 0;
let namesMarked = 0;
let namesRight = 0;
let goneMarked = 0;
let goneRight = 0;
const judged = [];
for (const r of records) {
  const j = cairn.judgeEvidence({ files: r.files, names: r.names }, entries);
  const truths = r.files.map((f) => ({ file: f.path, ...survives(r.commit, f.path, f.added) }));
  const isWrong = truths.some((t) => !t.ok);
  const isMarked = j.value === 'changed' || j.value === 'gone';
  wrong += isWrong ? 1 : 0;
  marked += isMarked ? 1 : 0;
  both += isWrong && isMarked ? 1 : 0;
  if (j.reasons.includes('names_missing')) {
    namesMarked++;
    namesRight += isWrong ? 1 : 0;
  }
  if (j.value === 'gone') {
    goneMarked++;
    goneRight += isWrong ? 1 : 0;
  }
  judged.push({ r, j, truths, isWrong, isMarked });
}
rmSync(checkout, { recursive: true, force: true });

const pct = (a, b) => (b ? `${((100 * a) / b).toFixed(0)}% (${a}/${b})` : 'n/a');
const unchangedFiles = judged.filter((x) => x.j.value === 'current').length;
// A sample to read by hand: marked-but-right, wrong-but-unmarked, and names-missing ones, evenly from the window.
const pick = (list, n) => list.filter((_, i) => i % Math.max(1, Math.floor(list.length / n)) === 0).slice(0, n);
const sample = [
  ...pick(
    judged.filter((x) => x.isMarked && !x.isWrong),
    SAMPLE / 3,
  ),
  ...pick(
    judged.filter((x) => !x.isMarked && x.isWrong),
    SAMPLE / 3,
  ),
  ...pick(
    judged.filter((x) => x.j.reasons.includes('names_missing')),
    SAMPLE / 3,
  ),
];
const sampleRows = sample.map(
  (x) =>
    `| ${x.r.commit.slice(0, 7)} | ${x.r.subject.replace(/\|/g, '/').slice(0, 60)} | ${x.r.files
      .map((f) => f.path)
      .join(', ')
      .slice(
        0,
        60,
      )} | ${x.j.value}${x.j.missingNames.length ? `: ${x.j.missingNames.join(', ')} gone` : ''} | ${x.isWrong ? 'wrong' : 'right'}: ${x.truths
      .map((t) => `${path.basename(t.file)} ${t.why}`)
      .join('; ')
      .slice(0, 90)} |`,
);
const md = `## Evidence on a public repository's history (\`CAIRN_REPLAY_REPO=… npm run bench evidence-replay\` → bench/evidence-replay.bench.mjs)

${name}: ${records.length} records, one per first-parent commit ${from}–${end} of ${all.length} (those touching a text file), each
citing the files its commit added or changed (at most ${MAX_FILES}) with their blob ids at that commit, and the names of its
subject and of the identifiers its added lines define. The checkout then moves ${all.length - 1 - end} commits forward to
${target.slice(0, 7)}, and each record is judged there by cairn's own report and rule. "Wrong" (from the diffs): a line the
commit added to a cited file no longer survives at ${target.slice(0, 7)} (\`git blame -w\`), or the file is gone.

| | |
|---|---|
| records | ${records.length} |
| became wrong (diffs) | ${wrong} |
| marked (changed or gone) | ${marked} |
| recall: wrong records marked | **${pct(both, wrong)}** |
| precision: marked records that are wrong | **${pct(both, marked)}** |
| marked with names gone: wrong | ${pct(namesRight, namesMarked)} |
| gone (every cited file deleted): wrong | ${pct(goneRight, goneMarked)} |
| current (every cited file unchanged up to whitespace) | ${unchangedFiles} |

Sample (${sample.length}: marked but right, wrong but unmarked, names gone):

| commit | subject | files | judged | diffs say |
|---|---|---|---|---|
${sampleRows.join('\n')}
`;
writeSection('evidence-replay', md);
console.log(md);
