// The committed retrieval set in real D1 (a regression check; public sets live in bench/): the default search
// must never trail keyword search, and exact queries (CJK, files, errors) must be answered by keywords alone.
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import set from '../../../bench/retrieval/set.json';
import { summarise, type Run } from '../../../bench/retrieval/metrics.mjs';
import type { AuthContext } from '../../../src/auth/types';
import { searchObservations } from '../../../src/search/search';
import { indexObservations } from '../../../src/vectors/index-records';
import { newIdentity } from '../support/http';
import { idsOf, seedObservation, seedProject, seedSession } from '../support/seed';

const keyById = new Map<number, string>();
let auth: AuthContext;

beforeAll(async () => {
  const id = await newIdentity();
  const ids = await idsOf(id);
  auth = {
    tokenId: 0,
    teamId: ids.teamId,
    teamSlug: id.team,
    userId: ids.userId,
    handle: id.user,
    role: 'owner',
    deviceId: null,
    deviceName: null,
    scopes: ['read'],
  };
  const sessions = new Map<string, { projectId: number; sessionId: number }>();
  const t0 = Date.UTC(2026, 5, 1);
  for (const [i, o] of set.observations.entries()) {
    if (!sessions.has(o.project)) {
      const projectId = await seedProject(ids, o.project);
      sessions.set(o.project, { projectId, sessionId: await seedSession(ids, projectId, `bench-${o.project}`) });
    }
    const s = sessions.get(o.project)!;
    const files = o.files.filter((f) => !/\.(test|spec)\./.test(f));
    const obsId = await seedObservation(ids, s.projectId, s.sessionId, {
      type: o.type,
      title: o.title,
      narrative: o.narrative,
      facts: o.facts,
      concepts: o.concepts,
      filesModified: files,
      createdAt: t0 + i * 60_000,
    });
    keyById.set(obsId, o.key);
  }
  const out = await indexObservations(env, ids.teamId, [...keyById.keys()]);
  expect(out.indexed).toBe(set.observations.length);
});

async function runAll(mode: 'fts' | 'hybrid'): Promise<(Run & { kind: string })[]> {
  const runs: (Run & { kind: string })[] = [];
  for (const q of set.queries) {
    const res = await searchObservations(env, auth, { q: q.q, limit: 10, mode });
    runs.push({ kind: q.kind, expected: q.expected, ranked: res.results.map((r) => keyById.get(r.id) ?? '?') });
  }
  return runs;
}

describe('retrieval set', () => {
  it('has at least 100 observations and 50 queries covering paraphrases, files, errors and CJK', () => {
    expect(set.observations.length).toBeGreaterThanOrEqual(100);
    expect(set.queries.length).toBeGreaterThanOrEqual(50);
    const kinds = new Set(set.queries.map((q) => q.kind));
    for (const k of ['paraphrase', 'file', 'error', 'cjk-zh', 'cjk-ja', 'cjk-mixed']) expect(kinds).toContain(k);
  });

  it('never ranks worse by default than mode=fts, overall or for any kind of query', async () => {
    const fts = await runAll('fts');
    const dflt = await runAll('hybrid');
    for (const kind of ['all', ...new Set(set.queries.map((q) => q.kind))]) {
      const pick = (runs: (Run & { kind: string })[]) => (kind === 'all' ? runs : runs.filter((r) => r.kind === kind));
      const [a, b] = [summarise(pick(fts)), summarise(pick(dflt))];
      expect({ kind, recall10: b.recall10 >= a.recall10, recall5: b.recall5 >= a.recall5 }).toEqual({
        kind,
        recall10: true,
        recall5: true,
      });
    }
  }, 60_000);

  it('answers every CJK, file-name and error-message query from FTS alone within the top 10', async () => {
    const fts = await runAll('fts');
    const exact = new Set(['file', 'error', 'cjk-zh', 'cjk-ja', 'cjk-mixed']);
    const misses = fts.filter((r) => exact.has(r.kind) && !r.expected.some((e) => r.ranked.includes(e)));
    expect(misses.map((m) => set.queries.find((q) => q.expected === m.expected)?.q)).toEqual([]);
  }, 60_000);
});
