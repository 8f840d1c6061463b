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
// committed here. Without CAIRN_REPLAY_REPO the bench says so and does nothing. BENCH_REPLAY_COMMITS / _AHEAD pick
// the window (defaults: records from the 200 commits that end 60 commits before the tip, judged 10 and 60 commits on).
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
const AHEADS = (process.env.BENCH_REPLAY_AHEAD ?? '10,60')
  .split(',')
  .map(Number)
  .sort((a, b) => a - b);
const AHEAD = AHEADS.at(-1);
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
export { judgeEvidence, evidenceNote, namesCitedFile } from '#shared/evidence';
export { namesIn, isPathName } from '#shared/names';
export { checkoutEntries } from './hooks-client/src/hook/checkout.ts';
export { idsOfBytes } from './hooks-client/src/repo/tracked.ts';
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
const from = Math.max(1, end - COMMITS + 1);
const window = all.slice(from, end + 1);
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
      ws: cairn.idsOfBytes(git('show', `${commit}:${f.path}`)).ws,
    })),
  });
}

/** Every record judged at `target` (cairn's report of that commit's files, cairn's rule) and against the diffs. */
function judgeAt(target) {
  const checkout = mkdtempSync(path.join(tmpdir(), 'cairn-replay-'));
  execFileSync('sh', ['-c', `git --git-dir "${REPO}" archive ${target} | tar -x -C "${checkout}"`]);
  // The watch the server would send (src/evidence/checkout.ts watchOf, no bound here: every record is judged).
  const watch = new Map();
  for (const r of records) {
    const idents = r.names.filter((n) => !cairn.isPathName(n));
    for (const f of r.files) watch.set(f.path, [...new Set([...(watch.get(f.path) ?? []), ...idents])].slice(0, 16));
    for (const n of r.names)
      if (cairn.isPathName(n) && !cairn.namesCitedFile(n, r.files) && !watch.has(n)) watch.set(n, []);
  }
  // The archive is a plain folder: the client's repository door is given it as a checkout of its own.
  const repo = { root: checkout, real: { gitDir: checkout, commonDir: checkout } };
  const entries = cairn.checkoutEntries(
    repo,
    { files: [...watch].map(([p, names]) => ({ path: p, names })), branches: [] },
    { watch: { files: [], branches: [] }, watchDigest: null, acked: null, files: {}, branches: [] },
  );
  const judged = records.map((r) => {
    const j = cairn.judgeEvidence({ files: r.files, names: r.names }, entries);
    const truths = r.files.map((f) => ({ file: f.path, ...survives(r.commit, target, f.path, f.added) }));
    return {
      r,
      j,
      truths,
      wrong: truths.some((t) => t.lost > 0),
      mostly: truths.some((t) => t.lost * 2 >= Math.max(1, t.added) && t.lost > 0),
      marked: j.value === 'changed' || j.value === 'gone',
    };
  });
  rmSync(checkout, { recursive: true, force: true });
  return judged;
}

/** Ground truth from the diffs: how many of the lines the commit added to the file do not survive at `target`. */
function survives(commit, target, file, added) {
  if (!blobAt(target, file)) return { added, lost: Math.max(1, added), why: 'file gone' };
  if (added === 0) return { added, lost: 0, why: 'no added lines' };
  if (!gitText('log', '--format=%H', `${commit}..${target}`, '--', file).trim())
    return { added, lost: 0, why: 'not touched since' };
  const blame = gitText('blame', '-w', '--porcelain', target, '--', file);
  const kept = blame.split('\n').filter((l) => l.startsWith(`${commit} `)).length;
  const lost = Math.max(0, added - kept);
  return { added, lost, why: lost ? `${lost}/${added} of its lines changed` : 'its lines survive' };
}

const horizons = AHEADS.map((ahead) => {
  const target = all[Math.min(all.length - 1, end + ahead)];
  return { ahead, target, judged: judgeAt(target) };
});

const pct = (a, b) => (b ? `${((100 * a) / b).toFixed(0)}% (${a}/${b})` : 'n/a');
const count = (xs, f) => xs.filter(f).length;
const stat = (judged, truth) => {
  const wrong = count(judged, (x) => x[truth]);
  const marked = count(judged, (x) => x.marked);
  const both = count(judged, (x) => x[truth] && x.marked);
  const names = judged.filter((x) => x.j.reasons.includes('names_missing'));
  const gone = judged.filter((x) => x.j.value === 'gone');
  return { wrong, marked, both, names, gone };
};
const rows = horizons.flatMap(({ ahead, target, judged }) =>
  ['wrong', 'mostly'].map((truth) => {
    const s = stat(judged, truth);
    return `| ${ahead} (${target.slice(0, 7)}) | ${truth === 'wrong' ? 'any added line' : 'half or more'} | ${s.wrong} | ${s.marked} | **${pct(s.both, s.wrong)}** | **${pct(s.both, s.marked)}** | ${pct(
      count(s.names, (x) => x[truth]),
      s.names.length,
    )} | ${pct(
      count(s.gone, (x) => x[truth]),
      s.gone.length,
    )} | ${count(judged, (x) => x.j.value === 'current')} |`;
  }),
);
// A sample to read by hand, from the farthest horizon: marked but right, wrong but unmarked, names gone.
const far = horizons.at(-1).judged;
const pick = (list, n) => list.filter((_, i) => i % Math.max(1, Math.floor(list.length / n)) === 0).slice(0, n);
const sample = [
  ...pick(
    far.filter((x) => x.marked && !x.mostly),
    SAMPLE / 3,
  ),
  ...pick(
    far.filter((x) => !x.marked && x.wrong),
    SAMPLE / 3,
  ),
  ...pick(
    far.filter((x) => x.j.reasons.includes('names_missing')),
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
      )} | ${x.j.value}${x.j.missingNames.length ? `: ${x.j.missingNames.join(', ')} gone` : ''} | ${x.mostly ? 'wrong' : x.wrong ? 'partly' : 'right'}: ${x.truths
      .map((t) => `${path.basename(t.file)} ${t.why}`)
      .join('; ')
      .slice(0, 90)} |`,
);
const md = `## Evidence on a public repository's history (\`CAIRN_REPLAY_REPO=… npm run bench evidence-replay\` → bench/evidence-replay.bench.mjs)

${name}: ${records.length} records, one per first-parent commit ${from}–${end} of ${all.length} (those touching a text file), each
citing the files its commit added or changed (at most ${MAX_FILES}) with their blob ids at that commit, and the names of its
subject and of the identifiers its added lines define. The checkout then moves forward, and each record is judged there
by cairn's own report (\`checkoutEntries\`) and rule (\`judgeEvidence\`). From the diffs, a record became wrong when lines
its commit added to a cited file no longer survive there (\`git blame -w\`; a gone file loses them all): any of them
(strict), or at least half of a file's (the record's point is gone). "Marked" is \`changed\` or \`gone\`.

| commits ahead | wrong when | wrong | marked | recall | precision | names gone → wrong | gone → wrong | current |
|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

Sample (${sample.length}, at ${horizons.at(-1).target.slice(0, 7)}: marked but right, wrong but unmarked, names gone):

| commit | subject | files | judged | diffs say |
|---|---|---|---|---|
${sampleRows.join('\n')}
`;
writeSection(`evidence-replay-${name.replace(/[^\w.-]+/g, '-')}`, md);
console.log(md);
