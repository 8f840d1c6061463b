// Every embedded thing has a vector of its own: an observation's main text and each of its facts, a session
// summary, a user prompt. The id scheme, what indexing writes (local rows, the Vectorize index), the backfill.
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { storePrompt } from '../../../src/store/sessions';
import { backfillVectors } from '../../../src/vectors/embed-job';
import { factEmbeddingText, factTexts, indexRecords, summaryText } from '../../../src/vectors/index-records';
import { allVectorIds, collapseParts, MAX_FACT_VECTORS, parseVectorId, vectorIdOf } from '../../../src/vectors/keys';
import { VectorizeVectorIndex } from '../../../src/vectors/vectorize-index';
import { call } from '../support/http';
import { FakeVectorize, productionVectorEnv } from '../support/fake-vectorize';
import { seedWorld } from '../support/seed';

afterEach(() => vi.restoreAllMocks());

const rowsOf = async (kind: string, id: number) =>
  (
    await env.DB.prepare(
      'SELECT part, type, project_id FROM local_vectors WHERE kind = ? AND record_id = ? ORDER BY part',
    )
      .bind(kind, id)
      .all<{ part: number; type: string; project_id: number }>()
  ).results;

const prompt = async (w: Awaited<ReturnType<typeof seedWorld>>, promptNumber: number, text: string) => {
  await storePrompt(env.DB, {
    teamId: w.ids.teamId,
    projectId: w.projectId,
    sessionDbId: w.sessionId,
    promptNumber,
    text,
    authorUserId: w.ids.userId,
    createdAt: Date.now(),
  });
  const row = await env.DB.prepare('SELECT id FROM prompts WHERE session_id = ? AND prompt_number = ?')
    .bind(w.sessionId, promptNumber)
    .first<{ id: number }>();
  return row!.id;
};

describe('the vector id scheme', () => {
  it('writes and reads back the id of every kind and part, under a shard prefix too', () => {
    const keys = [
      { kind: 'observation', id: 17, part: 0 },
      { kind: 'observation', id: 17, part: 3 },
      { kind: 'observation', id: 17, part: MAX_FACT_VECTORS },
      { kind: 'summary', id: 17, part: 0 },
      { kind: 'prompt', id: 17, part: 0 },
    ] as const;
    expect(keys.map((k) => vectorIdOf('', k))).toEqual(['17', '17.f3', `17.f${MAX_FACT_VECTORS}`, 's17', 'p17']);
    for (const prefix of ['', 'DB_1:'])
      for (const k of keys) expect(parseVectorId(prefix, vectorIdOf(prefix, k))).toEqual(k);
    const longest = vectorIdOf('DB_99:', { kind: 'summary', id: Number.MAX_SAFE_INTEGER, part: 0 });
    expect(new TextEncoder().encode(longest).length).toBeLessThanOrEqual(64);
  });

  it("reads an old bare id as an observation's main vector, and refuses other shards' ids and malformed ones", () => {
    expect(parseVectorId('', '42')).toEqual({ kind: 'observation', id: 42, part: 0 });
    for (const bad of ['DB_1:42', 'x42', '42.f0', `42.f${MAX_FACT_VECTORS + 1}`, 's42.f1', 'junk', ''])
      expect(parseVectorId('', bad)).toBeNull();
    expect(parseVectorId('DB_1:', '42')).toBeNull();
  });

  it('names every id a record can have, so forgetting needs no lookup', () => {
    expect(allVectorIds('', 'observation', 5)).toEqual([
      '5',
      ...Array.from({ length: MAX_FACT_VECTORS }, (_, i) => `5.f${i + 1}`),
    ]);
    expect(allVectorIds('DB_1:', 'prompt', 5)).toEqual(['DB_1:p5']);
  });

  it("collapses a record's parts to one hit at its best part's similarity, best first", () => {
    expect(
      collapseParts([
        { id: 1, score: 0.5 },
        { id: 2, score: 0.7 },
        { id: 1, score: 0.9 },
        { id: 2, score: 0.1 },
      ]),
    ).toEqual([
      { id: 1, score: 0.9 },
      { id: 2, score: 0.7 },
    ]);
  });
});

describe('what indexing embeds', () => {
  it('embeds each fact of an observation on its own beside its main text, at most eight, without blanks or repeats', async () => {
    const w = await seedWorld();
    const facts = ['one', ' ', 'two', 'one', ...Array.from({ length: 10 }, (_, i) => `fact ${i}`)];
    expect(factTexts(JSON.stringify(facts))).toEqual([
      'one',
      'two',
      'fact 0',
      'fact 1',
      'fact 2',
      'fact 3',
      'fact 4',
      'fact 5',
    ]);
    expect([factEmbeddingText('Talkative', 'one'), factEmbeddingText(null, 'one')]).toEqual(['Talkative: one', 'one']);
    const many = await w.add({ title: 'Talkative', type: 'decision', facts });
    const none = await w.add({ title: 'Quiet' });
    expect(await indexRecords(env, w.ids.teamId, { observations: [many, none] })).toEqual({
      indexed: 2,
      removed: 0,
      failed: 0,
    });
    expect((await rowsOf('observation', many)).map((r) => [r.part, r.type])).toEqual(
      Array.from({ length: 9 }, (_, i) => [i, 'decision']),
    );
    expect((await rowsOf('observation', none)).map((r) => r.part)).toEqual([0]);
  });

  it('embeds summaries and prompts as records of their own kind, and removes a deleted summary instead', async () => {
    const w = await seedWorld();
    const sum = await w.summary({ request: 'Speed up the importer', learned: 'Batching by 500 rows halves the time' });
    const gone = await w.summary({ request: 'Old', learned: 'Gone' });
    const p = await prompt(w, 1, 'why is the importer slow?');
    expect(
      summaryText({ request: 'R', investigated: '', learned: 'L', completed: 'C', next_steps: '', notes: null }),
    ).toBe('R\nL\nC');
    await indexRecords(env, w.ids.teamId, { summaries: [gone] });
    expect(await rowsOf('summary', gone)).toHaveLength(1);
    await env.DB.prepare('UPDATE summaries SET deleted_at = 1 WHERE id = ?').bind(gone).run();
    expect(await indexRecords(env, w.ids.teamId, { summaries: [sum, gone], prompts: [p] }, { now: 4321 })).toEqual({
      indexed: 2,
      removed: 1,
      failed: 0,
    });
    expect(await rowsOf('summary', sum)).toEqual([{ part: 0, type: 'summary', project_id: w.projectId }]);
    expect(await rowsOf('summary', gone)).toEqual([]);
    expect(await rowsOf('prompt', p)).toEqual([{ part: 0, type: 'prompt', project_id: w.projectId }]);
    const stamped = await env.DB.prepare(
      'SELECT (SELECT embedded_at FROM summaries WHERE id = ?1) AS s, (SELECT embedded_at FROM prompts WHERE id = ?2) AS p',
    )
      .bind(sum, p)
      .first();
    expect(stamped).toEqual({ s: 4321, p: 4321 });
  });

  it('sends all texts of a call to the embedder in one request and writes them to Vectorize under their ids and namespaces', async () => {
    const w = await seedWorld();
    const index = new FakeVectorize();
    const prod = productionVectorEnv(index);
    const obs = await w.add({ title: 'Pool exhausted', facts: ['max 10 connections', 'leak in retry path'] });
    const sum = await w.summary({ request: 'Fix the pool' });
    const p = await prompt(w, 1, 'why does the pool run dry?');
    const run = vi.spyOn(prod.AI!, 'run');
    await indexRecords(prod, w.ids.teamId, { observations: [obs], summaries: [sum], prompts: [p] });
    // Before facts, summaries and prompts: one text for this observation. Now five texts, still one call.
    expect(run).toHaveBeenCalledTimes(1);
    expect((run.mock.calls[0]![1] as { text: string[] }).text).toHaveLength(5);
    expect(index.idsOf(w.ids.teamId)).toEqual([`${obs}`, `${obs}.f1`, `${obs}.f2`, `p${p}`, `s${sum}`].sort());
    const t = w.ids.teamId;
    expect([...index.vectors.values()].map((v) => [v.id, v.namespace, v.metadata.kind])).toEqual(
      expect.arrayContaining([
        [`${obs}.f2`, `team-${t}`, 'observation'],
        [`s${sum}`, `team-${t}-summaries`, 'summary'],
        [`p${p}`, `team-${t}-prompts`, 'prompt'],
      ]),
    );
  });

  it('backfills every kind that has no vector yet, observations first', async () => {
    const w = await seedWorld();
    const obs = await w.add({ title: 'Backfill me', facts: ['a fact'] });
    const sum = await w.summary({ request: 'Summarised' });
    const p = await prompt(w, 1, 'a question');
    const first = await backfillVectors(env, w.ids.teamId, 1);
    expect(first).toMatchObject({ indexed: 1, remaining: 2 });
    expect(await rowsOf('observation', obs)).toHaveLength(2);
    const res = await call('/api/admin/backfill-vectors?limit=10', { token: w.id.token, method: 'POST' });
    expect(await res.json()).toMatchObject({ indexed: 2, remaining: 0 });
    expect(await rowsOf('summary', sum)).toHaveLength(1);
    expect(await rowsOf('prompt', p)).toHaveLength(1);
  });
});

describe('Vectorize reads', () => {
  it('answers an observation found by its main vector and two facts once, at the best score, and keeps each kind to its namespace', async () => {
    const query = vi.spyOn(env.VECTORS!, 'query').mockResolvedValue({
      count: 5,
      matches: [
        { id: '17.f2', score: 0.9 },
        { id: '18', score: 0.8 },
        { id: '17', score: 0.7 },
        { id: '17.f1', score: 0.6 },
        { id: 's17', score: 0.5 },
      ],
    } as never);
    const idx = new VectorizeVectorIndex(env.VECTORS!);
    expect(await idx.query([1], { teamId: 3, topK: 10 })).toEqual([
      { id: 17, score: 0.9 },
      { id: 18, score: 0.8 },
    ]);
    expect(await idx.query([1], { teamId: 3, kind: 'summary', topK: 10 })).toEqual([{ id: 17, score: 0.5 }]);
    expect(query.mock.calls.map((c) => c[1]?.namespace)).toEqual(['team-3', 'team-3-summaries']);
  });
});
