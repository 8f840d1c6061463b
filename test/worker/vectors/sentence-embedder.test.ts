// The local sentence model through its adapter: the real model (scripts/sentence-embedder.mjs) answers through the
// pool's EMBEDDER service binding, vectors go into the real D1 index, and the default search finds by meaning what
// keyword search cannot.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../../../src/auth/types';
import type { CairnEnv } from '../../../src/env';
import { searchObservations } from '../../../src/search/search';
import { getVectorAdapters } from '../../../src/vectors/adapters';
import { indexObservations } from '../../../src/vectors/index-records';
import { cosine, LocalVectorIndex } from '../../../src/vectors/local-index';
import { SENTENCE_EMBEDDER, SentenceEmbedder, type EmbedderService } from '../../../src/vectors/sentence-embedder';
import type { VectorAdapters } from '../../../src/vectors/types';
import { seedWorld } from '../support/seed';

const model = new SentenceEmbedder(env.EMBEDDER);

describe('the sentence embedder adapter', () => {
  it('puts a question closer to the chat line that answers it than to unrelated lines', async () => {
    const [question, answer, other, code] = await model.embed([
      "What are Kate's hobbies?",
      'Kate: I love skiing, and on weekends I go hiking with my dog.',
      'Tom: The train was late again this morning.',
      'Fixed the null check in the token refresh handler.',
    ]);
    expect(question).toHaveLength(model.dimensions);
    expect(Math.hypot(...question!)).toBeCloseTo(1, 4);
    expect(cosine(question!, answer!)).toBeGreaterThan(cosine(question!, other!));
    expect(cosine(question!, answer!)).toBeGreaterThan(cosine(question!, code!));
    expect(cosine(question!, answer!)).toBeGreaterThanOrEqual(model.minScore);
  });

  it('sends long batches in several requests and keeps their order', async () => {
    const texts = Array.from({ length: 70 }, (_, i) =>
      i === 69 ? 'the last one talks about skiing in the mountains' : `line ${i}`,
    );
    const many = await model.embed(texts);
    const [alone] = await model.embed([texts[69]!]);
    expect(many).toHaveLength(70);
    expect(cosine(many[69]!, alone!)).toBeCloseTo(1, 4);
  });

  it('treats a service answer of the wrong shape or status as a failure instead of storing it', async () => {
    const answering = (status: number, body: unknown): EmbedderService => ({
      fetch: async () => Response.json(body, { status }),
    });
    await expect(new SentenceEmbedder(answering(200, { vectors: [[1, 2, 3]] })).embed(['x'])).rejects.toThrow(
      /unexpected shape/,
    );
    await expect(new SentenceEmbedder(answering(200, { vectors: [] })).embed(['x'])).rejects.toThrow(
      /unexpected shape/,
    );
    await expect(new SentenceEmbedder(answering(503, { error: {} })).embed(['x'])).rejects.toThrow(/503/);
  });

  it('marks a search query so the service serves it before stored rows, and gives the same vector as embed', async () => {
    const seen: (string | null)[] = [];
    const spy: EmbedderService = {
      fetch: (input, init) => {
        seen.push(new Headers(init.headers).get('x-embed-priority'));
        return env.EMBEDDER.fetch(input, init);
      },
    };
    const e = new SentenceEmbedder(spy);
    const q = await e.embedQuery('where is the rate limiter?');
    const [stored] = await e.embed(['where is the rate limiter?']);
    expect(seen).toEqual(['query', null]);
    expect(cosine(q, stored!)).toBeCloseTo(1, 4);
  });

  it('is what local runs pick when the model service URL is set, and the offline embedder otherwise', () => {
    const withUrl = { ...env, CAIRN_EMBEDDER_URL: 'http://127.0.0.1:9/embed' } as CairnEnv;
    expect(getVectorAdapters(withUrl)?.embedder.name).toBe(SENTENCE_EMBEDDER);
    expect(getVectorAdapters(env as CairnEnv)?.embedder.name).toBe('local-hashed-ngrams');
  });
});

describe('default search with the sentence model', () => {
  it('finds the line that answers a question by meaning when no word is shared', async () => {
    const w = await seedWorld();
    const auth: AuthContext = {
      tokenId: 0,
      teamId: w.ids.teamId,
      teamSlug: w.id.team,
      userId: w.ids.userId,
      handle: w.id.user,
      role: 'owner',
      deviceId: null,
      deviceName: null,
      scopes: ['read'],
    };
    const skiing = await w.add({
      title: 'Kate: I love skiing',
      narrative: 'Kate: I love skiing, every winter I spend a week in the Alps.',
    });
    const ids = [skiing];
    for (const line of [
      'Tom: the train was late again',
      'Kate: my sister moved to Berlin',
      'Tom: I need to buy groceries tonight',
    ]) {
      ids.push(await w.add({ title: line, narrative: line }));
    }
    const adapters: VectorAdapters = { index: new LocalVectorIndex(env.DB), embedder: model };
    const indexed = await indexObservations(env as CairnEnv, w.ids.teamId, ids, { adapters });
    expect(indexed).toMatchObject({ indexed: ids.length, failed: 0 });

    const q = { q: 'Which sports does she enjoy?', project: [w.key], limit: 3 };
    const keyword = await searchObservations(env as CairnEnv, auth, { ...q, mode: 'fts' });
    const dflt = await searchObservations(env as CairnEnv, auth, q, { vectors: adapters });
    expect(keyword.results.map((r) => r.id)).not.toContain(skiing);
    expect(dflt.mode).toBe('hybrid');
    expect(dflt.results.map((r) => r.id)).toContain(skiing);
  });
});
