// Vector adapters: local D1 index and offline embedder for real, Vectorize and Workers AI through spies on the bindings.
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CairnEnv } from '../../../src/env';
import { getVectorAdapters } from '../../../src/vectors/adapters';
import { backfillVectors } from '../../../src/vectors/embed-job';
import { embeddingText, indexObservations } from '../../../src/vectors/index-records';
import { LocalEmbedder, embedText } from '../../../src/vectors/local-embedder';
import { LocalVectorIndex, cosine, toBlob } from '../../../src/vectors/local-index';
import type { VectorAdapters } from '../../../src/vectors/types';
import { MAX_FACT_VECTORS } from '../../../src/vectors/keys';
import { VectorizeVectorIndex, teamNamespace } from '../../../src/vectors/vectorize-index';
import { BGE_M3, WorkersAiEmbedder } from '../../../src/vectors/workers-ai-embedder';
import { call, fresh, newIdentity } from '../support/http';
import { idsOf, seedObservation, seedProject, seedSession } from '../support/seed';

afterEach(() => vi.restoreAllMocks());

const unit = (dims: number, hot: number) => Array.from({ length: dims }, (_, i) => (i === hot ? 1 : 0));

describe('offline embedder', () => {
  it('is deterministic and returns unit-length vectors of its declared size', async () => {
    const e = new LocalEmbedder();
    const [a, b] = await e.embed(['Login fails after token refresh', 'Login fails after token refresh']);
    expect(a).toEqual(b);
    expect(a).toHaveLength(e.dimensions);
    expect(Math.hypot(...a!)).toBeCloseTo(1, 5);
  });

  it('puts a paraphrase closer than an unrelated text', () => {
    const doc = embedText('Users cannot sign in: authentication rejects valid credentials after the JWT expires');
    const paraphrase = embedText('login broken when token expired');
    const unrelated = embedText('CSS grid layout overflows on narrow screens');
    expect(cosine(doc, paraphrase)).toBeGreaterThan(cosine(doc, unrelated) + 0.1);
    expect(cosine(doc, paraphrase)).toBeGreaterThan(new LocalEmbedder().minScore);
  });

  it('relates identifiers written in different styles and CJK synonyms to English', () => {
    const a = embedText('getUserToken returns null');
    const b = embedText('get_user_token gives null');
    const c = embedText('render the sidebar');
    expect(cosine(a, b)).toBeGreaterThan(cosine(a, c) + 0.3);
    expect(cosine(embedText('缓存失效'), embedText('cache invalidation'))).toBeGreaterThan(
      cosine(embedText('缓存失效'), embedText('deploy pipeline')),
    );
  });

  it('gives empty text a zero vector instead of NaN', () => {
    expect(embedText('').every((x) => x === 0)).toBe(true);
    expect(cosine(embedText(''), embedText('x'))).toBe(0);
  });
});

describe('local D1 vector index', () => {
  it('returns nearest neighbours scoped by team, project and type', async () => {
    const idx = new LocalVectorIndex(env.DB);
    const base = 9_000_000 + Math.floor(Math.random() * 100_000) * 10;
    await idx.upsert([
      { id: base + 1, teamId: 7001, projectId: 1, type: 'bugfix', values: unit(4, 0) },
      { id: base + 2, teamId: 7001, projectId: 2, type: 'bugfix', values: [0.9, 0.1, 0, 0] },
      { id: base + 3, teamId: 7001, projectId: 1, type: 'decision', values: [0.8, 0.2, 0, 0] },
      { id: base + 4, teamId: 7002, projectId: 1, type: 'bugfix', values: unit(4, 0) },
    ]);
    const q = unit(4, 0);
    expect((await idx.query(q, { teamId: 7001, topK: 10 })).map((m) => m.id)).toEqual([base + 1, base + 2, base + 3]);
    expect((await idx.query(q, { teamId: 7001, projectIds: [1], topK: 10 })).map((m) => m.id)).toEqual([
      base + 1,
      base + 3,
    ]);
    expect((await idx.query(q, { teamId: 7001, types: ['decision'], topK: 10 })).map((m) => m.id)).toEqual([base + 3]);
    expect((await idx.query(q, { teamId: 7001, excludeProjectIds: [1], topK: 10 })).map((m) => m.id)).toEqual([
      base + 2,
    ]);
    expect((await idx.query(q, { teamId: 7001, topK: 1 })).map((m) => m.id)).toEqual([base + 1]);
    const [top] = await idx.query(q, { teamId: 7001, topK: 1 });
    expect(top!.score).toBeCloseTo(1, 5);
  });

  it('replaces a vector on upsert and forgets deleted ids only within the team', async () => {
    const idx = new LocalVectorIndex(env.DB);
    const id = 8_000_000 + Math.floor(Math.random() * 100_000);
    await idx.upsert([{ id, teamId: 7100, projectId: 1, type: 'bugfix', values: unit(4, 0) }]);
    await idx.upsert([{ id, teamId: 7100, projectId: 1, type: 'bugfix', values: unit(4, 1) }]);
    expect((await idx.query(unit(4, 1), { teamId: 7100, topK: 5 }))[0]).toMatchObject({ id });
    await idx.deleteByIds(7999, [id]);
    expect(await idx.query(unit(4, 1), { teamId: 7100, topK: 5 })).toHaveLength(1);
    await idx.deleteByIds(7100, [id]);
    expect(await idx.query(unit(4, 1), { teamId: 7100, topK: 5 })).toHaveLength(0);
  });

  it('scores a vector rewritten in D1 after this isolate decoded it with the new values, not the remembered ones', async () => {
    const idx = new LocalVectorIndex(env.DB);
    const id = 8_200_000 + Math.floor(Math.random() * 100_000);
    await idx.upsert([{ id, teamId: 7200, projectId: 1, type: 'bugfix', values: unit(4, 0) }]);
    expect((await idx.query(unit(4, 0), { teamId: 7200, topK: 1 }))[0]!.score).toBeCloseTo(1, 5);
    // Written behind the index's back (another isolate re-embedding the observation).
    await env.DB.prepare("UPDATE local_vectors SET embedding = ? WHERE record_id = ? AND kind = 'observation'")
      .bind(toBlob(unit(4, 2)), id)
      .run();
    expect((await idx.query(unit(4, 0), { teamId: 7200, topK: 1 }))[0]!.score).toBeCloseTo(0, 5);
    expect((await idx.query(unit(4, 2), { teamId: 7200, topK: 1 }))[0]!.score).toBeCloseTo(1, 5);
  });

  it("leaves out neighbours under the caller's floor, and still answers the best topK of the rest", async () => {
    const idx = new LocalVectorIndex(env.DB);
    const teamId = 7_400_000 + Math.floor(Math.random() * 100_000);
    const base = 8_600_000 + Math.floor(Math.random() * 100_000) * 4;
    const near = [1, 0.9, 0.1, 0].map((x) => [x, Math.sqrt(1 - x * x), 0, 0]);
    await idx.upsert(near.map((values, i) => ({ id: base + i, teamId, projectId: 1, type: 'bugfix', values })));
    const found = await idx.query(unit(4, 0), { teamId, topK: 10, minScore: 0.5 });
    expect(found.map((m) => m.id)).toEqual([base, base + 1]);
    expect((await idx.query(unit(4, 0), { teamId, topK: 1, minScore: 0.5 })).map((m) => m.id)).toEqual([base]);
    expect(await idx.query(unit(4, 0), { teamId, topK: 10 })).toHaveLength(4);
  });

  it('leaves out vectors of another length, written by another embedder before the local stack switched models', async () => {
    const idx = new LocalVectorIndex(env.DB);
    const base = 8_400_000 + Math.floor(Math.random() * 100_000) * 2;
    await idx.upsert([
      { id: base, teamId: 7300, projectId: 1, type: 'bugfix', values: unit(8, 0) },
      { id: base + 1, teamId: 7300, projectId: 1, type: 'bugfix', values: unit(4, 0) },
    ]);
    expect((await idx.query(unit(4, 0), { teamId: 7300, topK: 5 })).map((m) => m.id)).toEqual([base + 1]);
  });
});

describe('Vectorize adapter (spied binding)', () => {
  it('upserts into the team namespace with project and type metadata, in batches of 1000', async () => {
    const upsert = vi.spyOn(env.VECTORS!, 'upsert').mockResolvedValue({ mutationId: 'm1' } as never);
    const idx = new VectorizeVectorIndex(env.VECTORS!);
    const records = Array.from({ length: 1001 }, (_, i) => ({
      id: i + 1,
      teamId: 42,
      projectId: 5,
      type: 'bugfix',
      values: [0.1, 0.2],
    }));
    await idx.upsert(records);
    expect(upsert).toHaveBeenCalledTimes(2);
    expect(upsert.mock.calls[0]![0]).toHaveLength(1000);
    expect(upsert.mock.calls[0]![0][0]).toEqual({
      id: '1',
      values: [0.1, 0.2],
      namespace: 'team-42',
      metadata: { project: '5', type: 'bugfix', kind: 'observation' },
    });
  });

  it('queries the team namespace with metadata filters and a capped topK, and parses ids', async () => {
    const query = vi.spyOn(env.VECTORS!, 'query').mockResolvedValue({
      count: 2,
      matches: [
        { id: '17', score: 0.8 },
        { id: 'junk', score: 0.7 },
      ],
    } as never);
    const idx = new VectorizeVectorIndex(env.VECTORS!);
    const res = await idx.query([0.5, 0.5], { teamId: 9, projectIds: [3, 4], types: ['decision'], topK: 500 });
    expect(res).toEqual([{ id: 17, score: 0.8 }]);
    expect(query).toHaveBeenCalledWith([0.5, 0.5], {
      topK: 100,
      namespace: teamNamespace(9),
      returnValues: false,
      returnMetadata: 'none',
      filter: { project: { $in: ['3', '4'] }, type: { $in: ['decision'] } },
    });
    await idx.query([1], { teamId: 9, topK: 5 });
    expect(query.mock.calls[1]![1]).not.toHaveProperty('filter');
    await idx.query([1], { teamId: 9, excludeProjectIds: [8], topK: 5 });
    expect(query.mock.calls[2]![1]).toMatchObject({ filter: { project: { $nin: ['8'] } } });
  });

  it("deletes by string ids, naming an observation's main vector and every fact slot it can have", async () => {
    const del = vi.spyOn(env.VECTORS!, 'deleteByIds').mockResolvedValue({ mutationId: 'm2' } as never);
    await new VectorizeVectorIndex(env.VECTORS!).deleteByIds(1, [5, 6]);
    const facts = (id: number) => Array.from({ length: MAX_FACT_VECTORS }, (_, i) => `${id}.f${i + 1}`);
    expect(del).toHaveBeenCalledWith(['5', ...facts(5), '6', ...facts(6)]);
    await new VectorizeVectorIndex(env.VECTORS!).deleteByIds(1, [5], 'summary');
    expect(del).toHaveBeenLastCalledWith(['s5']);
  });
});

describe('Workers AI embedder (spied binding)', () => {
  it('calls bge-m3 in batches of 100 and returns the vectors in order', async () => {
    const run = vi.spyOn(env.AI!, 'run').mockImplementation((async (_model: string, inputs: { text: string[] }) => ({
      shape: [inputs.text.length, 1024],
      data: inputs.text.map((t) => Array.from({ length: 1024 }, () => t.length)),
    })) as never);
    const texts = Array.from({ length: 150 }, (_, i) => 'x'.repeat(i + 1));
    const out = await new WorkersAiEmbedder(env.AI!).embed(texts);
    expect(run).toHaveBeenCalledTimes(2);
    expect(run.mock.calls[0]![0]).toBe(BGE_M3);
    expect((run.mock.calls[0]![1] as { text: string[] }).text).toHaveLength(100);
    expect(out).toHaveLength(150);
    expect(out[149]![0]).toBe(150);
  });

  it('refuses a reply of the wrong shape', async () => {
    vi.spyOn(env.AI!, 'run').mockResolvedValue({ data: [[1, 2, 3]] } as never);
    await expect(new WorkersAiEmbedder(env.AI!).embed(['a'])).rejects.toThrow(/unexpected shape/);
  });
});

describe('adapter selection', () => {
  it('uses the local adapters when CAIRN_LOCAL is 1, Cloudflare bindings otherwise, none without bindings', () => {
    expect(getVectorAdapters(env)?.index.name).toBe('local-d1');
    const prod = getVectorAdapters({ DB: env.DB, VECTORS: env.VECTORS, AI: env.AI } as CairnEnv);
    expect([prod?.index.name, prod?.embedder.name]).toEqual(['vectorize', 'workers-ai-bge-m3']);
    expect(getVectorAdapters({ DB: env.DB, AI: env.AI } as CairnEnv)).toBeNull();
  });
});

async function seeded() {
  const id = await newIdentity();
  const ids = await idsOf(id);
  const key = `github.com/acme/${fresh('v')}`;
  const projectId = await seedProject(ids, key);
  const sessionId = await seedSession(ids, projectId, fresh('s'));
  return { id, ids, key, projectId, sessionId };
}

describe('indexing observations', () => {
  it('builds the embedding text from title, facts, narrative, concepts and file names', () => {
    const text = embeddingText({
      title: 'T',
      subtitle: null,
      narrative: 'N',
      facts: '["F1","F2"]',
      concepts: '["gotcha"]',
      files_read: '["/a/b/c.ts"]',
      files_modified: 'not json',
    });
    expect(text).toBe('T\nF1\nF2\nN\ngotcha\nb/c.ts');
  });

  it('embeds rows, stamps embedded_at, and removes soft-deleted ones from the index', async () => {
    const s = await seeded();
    const live = await seedObservation(s.ids, s.projectId, s.sessionId, { title: 'Connection pool exhausted' });
    const gone = await seedObservation(s.ids, s.projectId, s.sessionId, { title: 'Old note' });
    await env.DB.prepare('UPDATE observations SET deleted_at = 1 WHERE id = ?').bind(gone).run();
    const out = await indexObservations(env, s.ids.teamId, [live, gone, live], { now: 1234 });
    expect(out).toEqual({ indexed: 1, removed: 1, failed: 0 });
    const row = await env.DB.prepare('SELECT embedded_at FROM observations WHERE id = ?')
      .bind(live)
      .first<{ embedded_at: number }>();
    expect(row?.embedded_at).toBe(1234);
    const vec = await env.DB.prepare(
      "SELECT team_id, project_id, length(embedding) AS bytes FROM local_vectors WHERE record_id = ? AND kind = 'observation'",
    )
      .bind(live)
      .first();
    expect(vec).toEqual({ team_id: s.ids.teamId, project_id: s.projectId, bytes: 256 * 4 });
  });

  it('ignores ids of another team', async () => {
    const s = await seeded();
    const other = await seeded();
    const theirs = await seedObservation(other.ids, other.projectId, other.sessionId, { title: 'Theirs' });
    expect(await indexObservations(env, s.ids.teamId, [theirs])).toEqual({ indexed: 0, removed: 0, failed: 0 });
    const row = await env.DB.prepare('SELECT embedded_at FROM observations WHERE id = ?')
      .bind(theirs)
      .first<{ embedded_at: number | null }>();
    expect(row?.embedded_at).toBeNull();
  });

  it('never throws when embedding fails and leaves the rows for the backfill', async () => {
    const s = await seeded();
    const id = await seedObservation(s.ids, s.projectId, s.sessionId, { title: 'Will fail' });
    const failing: VectorAdapters = {
      index: new LocalVectorIndex(env.DB),
      embedder: {
        name: 'down',
        dimensions: 4,
        minScore: 0,
        embed: async () => {
          throw new Error('AI down');
        },
      },
    };
    vi.spyOn(console, 'error').mockImplementation(() => {});
    expect(await indexObservations(env, s.ids.teamId, [id], { adapters: failing })).toEqual({
      indexed: 0,
      removed: 0,
      failed: 1,
    });
    expect((await backfillVectors(env, s.ids.teamId, 10)).indexed).toBe(1);
  });
});

describe('POST /api/admin/backfill-vectors', () => {
  it('embeds missing rows in bounded batches until none remain', async () => {
    const s = await seeded();
    const target = await seedObservation(s.ids, s.projectId, s.sessionId, {
      title: 'Authentication rejects valid credentials after JWT expiry',
      narrative: 'Users could not sign in once the access token aged out.',
    });
    for (let i = 0; i < 4; i++)
      await seedObservation(s.ids, s.projectId, s.sessionId, { title: `Sidebar layout tweak ${i}` });
    const first = await call('/api/admin/backfill-vectors?limit=3', { token: s.id.token, method: 'POST' });
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ indexed: 3, remaining: 2, index: 'local-d1' });
    const second = await call('/api/admin/backfill-vectors?limit=3', { token: s.id.token, method: 'POST' });
    expect(await second.json()).toMatchObject({ indexed: 2, remaining: 0 });
    const vectors = await env.DB.prepare(
      "SELECT count(*) AS n FROM local_vectors WHERE record_id = ? AND kind = 'observation'",
    )
      .bind(target)
      .first<{ n: number }>();
    expect(vectors?.n).toBe(1);
  });

  it('refuses tokens without the admin scope and bad limits', async () => {
    const s = await seeded();
    const member = await newIdentity({ team: s.id.team });
    const denied = await call('/api/admin/backfill-vectors', { token: member.token, method: 'POST' });
    expect(denied.status).toBe(403);
    const bad = await call('/api/admin/backfill-vectors?limit=5000', { token: s.id.token, method: 'POST' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_query');
  });
});
