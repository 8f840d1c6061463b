// The vector channel for every kind: an observation found by one of its facts ranks once, as itself; summaries and
// prompts are found by their vectors too; vectors written before facts (bare ids) still resolve; a failing vector
// side leaves every kind to keyword search.
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import type { AuthContext } from '../../../src/auth/types';
import { searchObservations } from '../../../src/search/search';
import { storePrompt } from '../../../src/store/sessions';
import { factEmbeddingText, indexRecords } from '../../../src/vectors/index-records';
import { LocalVectorIndex } from '../../../src/vectors/local-index';
import type { Embedder, VectorAdapters } from '../../../src/vectors/types';
import { VectorizeVectorIndex } from '../../../src/vectors/vectorize-index';
import { FakeVectorize } from '../support/fake-vectorize';
import { seedWorld, type SeedWorld } from '../support/seed';

const authOf = (w: SeedWorld): AuthContext => ({
  tokenId: 0,
  teamId: w.ids.teamId,
  teamSlug: w.id.team,
  userId: w.ids.userId,
  handle: w.id.user,
  role: 'owner',
  deviceId: null,
  deviceName: null,
  scopes: ['read'],
});

/**
 * An embedder that puts the query and every text naming `near` on one axis (a little apart, so scores differ) and
 * everything else on another: which vectors a search finds is then decided here, not by a model.
 */
function axisEmbedder(query: string, near: string[]): Embedder {
  const vec = (t: string): number[] => {
    if (t === query) return [1, 0, 0];
    const i = near.findIndex((n) => t === n);
    return i < 0 ? [0, 1, 0] : [Math.cos(0.1 * (i + 1)), 0, Math.sin(0.1 * (i + 1))];
  };
  // Not one of the configured names, so it is weighed like bge-m3 (rank fusion, weight 0.5).
  return { name: 'axis-test', dimensions: 3, minScore: 0.5, embed: async (texts) => texts.map(vec) };
}

const refs = (res: { results: { kind: string; id: number }[] }) => res.results.map((r) => `${r.kind}:${r.id}`);

async function promptOf(w: SeedWorld, text: string): Promise<number> {
  await storePrompt(env.DB, {
    teamId: w.ids.teamId,
    projectId: w.projectId,
    sessionDbId: w.sessionId,
    promptNumber: 1,
    text,
    authorUserId: w.ids.userId,
    createdAt: Date.now(),
  });
  return (await env.DB.prepare('SELECT id FROM prompts WHERE session_id = ?')
    .bind(w.sessionId)
    .first<{ id: number }>())!.id;
}

describe('vector hits collapse to their record', () => {
  it('finds an observation by its facts alone once, not once per fact', async () => {
    const w = await seedWorld();
    const facts = ['Retries double the wait', 'The cap is thirty seconds', 'Jitter spreads the herd'];
    const found = await w.add({ title: 'Backoff policy', narrative: 'How the client waits', facts });
    const other = await w.add({ title: 'Sidebar colour', narrative: 'Blue' });
    const q = 'quokka';
    const adapters: VectorAdapters = {
      index: new LocalVectorIndex(env.DB),
      embedder: axisEmbedder(
        q,
        facts.map((f) => factEmbeddingText('Backoff policy', f)),
      ),
    };
    await indexRecords(env, w.ids.teamId, { observations: [found, other] }, { adapters });
    const res = await searchObservations(env, authOf(w), { q, project: [w.key] }, { vectors: adapters });
    expect(res.mode).toBe('hybrid');
    expect(res.results.map((r) => r.id)).toEqual([found]);
    expect(res.total).toBe(1);
  });
});

describe('summaries and prompts in the vector channel', () => {
  it('finds a summary and a prompt by their vectors alone, per kind and with kind=all', async () => {
    const w = await seedWorld();
    const q = 'quokka';
    const sumText = 'Move the billing job to the queue';
    const promptText = 'why does the nightly invoice run time out?';
    const sum = await w.summary({ request: sumText });
    const p = await promptOf(w, promptText);
    const obs = await w.add({ title: 'Unrelated note' });
    const adapters: VectorAdapters = {
      index: new LocalVectorIndex(env.DB),
      embedder: axisEmbedder(q, [sumText, promptText]),
    };
    await indexRecords(env, w.ids.teamId, { observations: [obs], summaries: [sum], prompts: [p] }, { adapters });
    const search = (kind: 'summaries' | 'prompts' | 'all') =>
      searchObservations(env, authOf(w), { q, project: [w.key], kind }, { vectors: adapters });
    expect(refs(await search('summaries'))).toEqual([`summary:${sum}`]);
    expect(refs(await search('prompts'))).toEqual([`prompt:${p}`]);
    const all = await search('all');
    expect(all.mode).toBe('hybrid');
    expect(refs(all).sort()).toEqual([`prompt:${p}`, `summary:${sum}`]);
    // Keyword search alone finds neither: the words are not there.
    expect(
      (await searchObservations(env, authOf(w), { q, project: [w.key], kind: 'all', mode: 'fts' })).results,
    ).toEqual([]);
  });

  it('answers summaries and prompts from keywords alone when the vector side fails', async () => {
    const w = await seedWorld();
    const sum = await w.summary({ learned: 'The wombat cache warms at boot' });
    const p = await promptOf(w, 'is the wombat cache warm?');
    const failing: VectorAdapters = {
      index: {
        name: 'down',
        upsert: async () => {},
        deleteByIds: async () => {},
        query: async () => {
          throw new Error('index down');
        },
      },
      embedder: axisEmbedder('wombat cache', []),
    };
    vi.spyOn(console, 'warn').mockImplementation(() => {});
    const res = await searchObservations(
      env,
      authOf(w),
      { q: 'wombat cache', project: [w.key], kind: 'all' },
      { vectors: failing },
    );
    expect(res.mode).toBe('fts');
    expect(refs(res).sort()).toEqual([`prompt:${p}`, `summary:${sum}`]);
    vi.restoreAllMocks();
  });
});

describe('vectors written before facts had their own', () => {
  it("still finds an observation through its old bare-id vector, beside another's fact vector", async () => {
    const w = await seedWorld();
    const old = await w.add({ title: 'Written before facts' });
    const fresh = await w.add({ title: 'Written after', facts: ['The quokka fact'] });
    const fake = new FakeVectorize();
    // As the index held it before: a bare row id in the team namespace, metadata without `kind`.
    await fake.upsert([
      {
        id: String(old),
        namespace: `team-${w.ids.teamId}`,
        values: [0.9, 0.1, 0],
        metadata: { project: String(w.projectId), type: 'discovery' },
      },
    ]);
    const adapters: VectorAdapters = {
      index: new VectorizeVectorIndex(fake),
      embedder: axisEmbedder('quokka', [factEmbeddingText('Written after', 'The quokka fact')]),
    };
    await indexRecords(env, w.ids.teamId, { observations: [fresh] }, { adapters });
    expect(fake.idsOf(w.ids.teamId)).toEqual([String(old), String(fresh), `${fresh}.f1`].sort());
    const res = await searchObservations(env, authOf(w), { q: 'quokka', project: [w.key] }, { vectors: adapters });
    expect(res.results.map((r) => r.id).sort()).toEqual([old, fresh].sort());
  });
});
