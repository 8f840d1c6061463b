// The set written in this repository (bench/retrieval/set.json): a regression check only. Its queries and the
// old offline thesaurus were written together, so it cannot decide defaults; the public sets do.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../../scripts/dev-server.mjs';

export function load() {
  const set = JSON.parse(readFileSync(path.join(ROOT, 'bench/retrieval/set.json'), 'utf8'));
  const byProject = new Map();
  set.observations.forEach((o, i) => {
    if (!byProject.has(o.project)) byProject.set(o.project, []);
    byProject.get(o.project).push({
      key: o.key,
      title: o.title,
      narrative: o.narrative,
      facts: o.facts,
      concepts: o.concepts,
      files: o.files,
      type: o.type,
      created_at: Date.UTC(2026, 5, 1) + i * 60_000,
    });
  });
  // Queries search every project of the set, as the original benchmark did.
  return {
    projects: [...byProject].map(([key, observations]) => ({ key, observations })),
    queries: set.queries.map((q) => ({ q: q.q, project: null, expected: q.expected, kind: q.kind })),
  };
}
