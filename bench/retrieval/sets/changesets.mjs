// Release notes → commits, from the history of github.com/honojs/middleware (MIT), read at run time from a
// snapshot (CAIRN_BENCH_CHANGESETS=<its git dir>); nothing of it is committed here. Each package's CHANGELOG.md
// entry is written by a contributor for users (a changeset) and links the commit that made the change; the
// question is that entry's text, the answer is that commit among every commit of the repository (subject,
// body and changed files stored as one observation each, as a coding agent's memory of the work would be).
import { git, snapshotDir } from './snapshot.mjs';

export const ENV = 'CAIRN_BENCH_CHANGESETS';
const PROJECT = 'honojs/middleware';

/** Markdown link and emphasis syntax out, text kept: `[#12](url)` → `#12`. */
const plain = (s) =>
  s
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();

export function load() {
  const { dir, why } = snapshotDir(ENV);
  if (!dir) return { skipped: why };
  const log = git(dir, ['log', '--no-merges', '--name-only', '--format=%x1e%H%x1f%ct%x1f%s%x1f%b%x1f']);
  const observations = [];
  const shas = new Set();
  for (const rec of log.split('\x1e').slice(1)) {
    const [sha, ct, subject, body, files] = rec.split('\x1f');
    shas.add(sha);
    observations.push({
      key: sha,
      title: subject.slice(0, 500),
      narrative: body.trim().slice(0, 5000),
      files: (files ?? '')
        .split('\n')
        .map((f) => f.trim())
        .filter((f) => f && f.length <= 300)
        .slice(0, 20),
      created_at: Number(ct) * 1000,
    });
  }
  observations.reverse(); // oldest first, as memory accumulates
  const changelogs = git(dir, ['ls-tree', '-r', '--name-only', 'HEAD'])
    .split('\n')
    .filter((f) => /^packages\/[^/]+\/CHANGELOG\.md$/.test(f));
  const queries = [];
  const asked = new Set();
  for (const file of changelogs) {
    for (const line of git(dir, ['show', `HEAD:${file}`]).split('\n')) {
      // - [#2038](…/pull/2038) [`7bc11df…`](…/commit/7bc11df…) Thanks [@who](…)! - What changed.
      const m = /^- (?:\[#\d+\]\([^)]*\) )?\[`([0-9a-f]{7,40})`\]\([^)]*\)(?: Thanks [^!]*!)? - (.+)$/.exec(line);
      if (!m) continue;
      const sha = [...shas].find((s) => s.startsWith(m[1]));
      const q = plain(m[2]).slice(0, 300);
      if (!sha || q.split(' ').length < 3 || asked.has(`${sha} ${q}`)) continue;
      asked.add(`${sha} ${q}`);
      queries.push({ q, project: PROJECT, expected: [sha], kind: 'changeset' });
    }
  }
  return { projects: [{ key: PROJECT, observations }], queries };
}
