// GET /api/search end to end in workerd: ranking, filters, paging, hostile input, CJK, visibility, fallback.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../../../src/auth/types';
import { searchObservations } from '../../../src/search/search';
import type { VectorAdapters } from '../../../src/vectors/types';
import { call, fresh, newIdentity, forgetTokenMemo } from '../support/http';
import { idsOf, seedObservation, seedProject, seedSession, seedWorld, type SeedWorld } from '../support/seed';

interface Hit {
  id: number;
  time: string;
  type: string;
  title: string;
  project: string;
  author: string;
  tokens: number;
  score: number;
}
interface Body {
  results: Hit[];
  total: number;
  mode: 'hybrid' | 'fts';
}

async function search(
  token: string,
  query: Record<string, string | string[]>,
): Promise<{ status: number; body: Body & { error?: { code: string } } }> {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) for (const one of Array.isArray(v) ? v : [v]) qs.append(k, one);
  const res = await call(`/api/search?${qs}`, { token });
  return { status: res.status, body: (await res.json()) as Body & { error?: { code: string } } };
}

const world = () => seedWorld();

describe('GET /api/search', () => {
  it('ranks a title match above a passing mention in the narrative', async () => {
    const w = await world();
    const mention = await w.add({
      title: 'Refactored the payment form',
      narrative: 'While there, noticed the webhook verifier is slow.',
    });
    const titled = await w.add({
      title: 'Webhook verifier rejects valid signatures',
      narrative: 'The HMAC was computed over parsed JSON.',
    });
    const { status, body } = await search(w.id.token, { q: 'webhook verifier' });
    expect(status).toBe(200);
    expect(body.results.map((r) => r.id)).toEqual([titled, mention]);
    expect(body.results[0]).toMatchObject({ project: w.key, author: w.id.user, type: 'discovery' });
    expect(body.results[0]!.tokens).toBeGreaterThan(5);
    expect(new Date(body.results[0]!.time).getTime()).toBeGreaterThan(0);
  });

  it('puts all-terms matches before partial ones but still returns the partial ones', async () => {
    const w = await world();
    const partial = await w.add({ title: 'Redis connection pool exhausted under load' });
    const both = await w.add({ title: 'Redis timeout when the session store is cold' });
    const { body } = await search(w.id.token, { q: 'redis timeout', project: w.key });
    expect(body.results.map((r) => r.id)).toEqual([both, partial]);
    expect(body.total).toBe(2);
  });

  it('matches a file name written with its punctuation as one phrase', async () => {
    const w = await world();
    const target = await w.add({
      title: 'Rate limiter lives in src/teams/rate-limit.ts',
      facts: ['rate-limit.ts counts per token'],
    });
    await w.add({ title: 'Teams may rate the limit of their plan' });
    const { body } = await search(w.id.token, { q: 'rate-limit.ts' });
    expect(body.results[0]!.id).toBe(target);
  });

  it('answers hostile query text with 200 and never an error', async () => {
    const w = await world();
    await w.add({
      title: 'Quoting rules for FTS5 queries',
      narrative: 'NEAR and OR are operators; "quotes" must be doubled.',
    });
    const hostile = [
      '"',
      '""',
      '"unbalanced',
      "it's",
      '(',
      ')',
      '((a',
      'a)',
      '[x]',
      '{title}: x',
      '*',
      'foo*',
      '-',
      '-foo',
      'a - b',
      'NEAR',
      'NEAR(a b)',
      'a NEAR b',
      'OR',
      'a OR',
      'OR b',
      'AND',
      'NOT',
      'a AND NOT b',
      '^start',
      'col:val',
      'title:"x"',
      '🔥🚀',
      'emoji 🔥 fts5',
      '\\',
      '%',
      '_',
      "'; DROP TABLE observations; --",
      '\u0000',
      'x'.repeat(900),
      'a:b:c',
      '+++',
      '?',
      'fts5 "quotes" (NEAR)',
    ];
    for (const q of hostile) {
      const { status, body } = await search(w.id.token, { q });
      expect(status, `query ${JSON.stringify(q)}`).toBe(200);
      expect(Array.isArray(body.results)).toBe(true);
    }
    const withFilter = await search(w.id.token, { q: '🔥 "" ()', project: w.key });
    expect(withFilter.body).toEqual({ results: [], total: 0, mode: 'fts' });
    const { body } = await search(w.id.token, { q: 'fts5 "quotes" (NEAR)' });
    expect(body.results).toHaveLength(1);
    const count = await env.DB.prepare('SELECT count(*) AS n FROM observations WHERE team_id = ?')
      .bind(w.ids.teamId)
      .first<{ n: number }>();
    expect(count?.n).toBe(1);
  });

  it('refuses a request with neither a query nor a filter', async () => {
    const w = await world();
    for (const q of [{}, { q: '' }, { q: '   ' }] as Record<string, string>[]) {
      const { status, body } = await search(w.id.token, q);
      expect(status).toBe(400);
      expect(body.error?.code).toBe('query_required');
    }
  });

  it('rejects out-of-range paging and unreadable dates with invalid_query', async () => {
    const w = await world();
    for (const q of [
      { q: 'x', limit: '101' },
      { q: 'x', limit: '0' },
      { q: 'x', offset: '-1' },
      { q: 'x', offset: '901' },
      { q: 'x', since: 'yesterday-ish' },
    ] as Record<string, string>[]) {
      const { status, body } = await search(w.id.token, q);
      expect(status).toBe(400);
      expect(body.error?.code).toBe('invalid_query');
    }
  });

  it('finds Chinese two-character terms and longer phrases inside longer runs', async () => {
    const w = await world();
    const auth = await w.add({ title: '修复用户身份验证的错误', narrative: '登录后令牌过期导致用户身份丢失' });
    const cache = await w.add({ title: '缓存失效策略', narrative: '数据库查询结果缓存五分钟' });
    expect((await search(w.id.token, { q: '身份' })).body.results.map((r) => r.id)).toEqual([auth]);
    expect((await search(w.id.token, { q: '用户身份' })).body.results.map((r) => r.id)).toEqual([auth]);
    expect((await search(w.id.token, { q: '缓存' })).body.results.map((r) => r.id)).toEqual([cache]);
    expect((await search(w.id.token, { q: '数据库查询' })).body.results.map((r) => r.id)).toEqual([cache]);
  });

  it('finds Japanese text and mixed Japanese/Chinese with English words', async () => {
    const w = await world();
    const ja = await w.add({
      title: '認証トークンの期限切れでログインに失敗',
      narrative: 'refresh token を更新しない不具合',
    });
    const mixed = await w.add({ title: '修复bug: Redis 连接超时', narrative: 'connection pool 太小' });
    expect((await search(w.id.token, { q: 'トークン' })).body.results.map((r) => r.id)).toEqual([ja]);
    expect((await search(w.id.token, { q: '認証トークン 期限切れ' })).body.results.map((r) => r.id)).toEqual([ja]);
    expect((await search(w.id.token, { q: 'トークンの期限' })).body.results.map((r) => r.id)).toEqual([ja]);
    expect((await search(w.id.token, { q: 'redis 超时' })).body.results[0]!.id).toBe(mixed);
    expect((await search(w.id.token, { q: '修复bug' })).body.results.map((r) => r.id)).toEqual([mixed]);
  });

  it('treats a single CJK character as a prefix of the terms that start with it', async () => {
    const w = await world();
    const id = await w.add({ title: '缓存失效' });
    expect((await search(w.id.token, { q: '缓' })).body.results.map((r) => r.id)).toEqual([id]);
  });

  it('applies project, type, concept, file, author, since and until filters', async () => {
    const w = await world();
    const teammate = await newIdentity({ team: w.id.team });
    const mate = await idsOf(teammate);
    const otherKey = `github.com/acme/${fresh('other')}`;
    const otherProject = await seedProject(w.ids, otherKey);
    const otherSession = await seedSession(w.ids, otherProject, fresh('s'));
    const t0 = Date.UTC(2026, 0, 10);
    const a = await w.add({
      title: 'Parser drops trailing fence',
      type: 'bugfix',
      concepts: ['gotcha'],
      filesModified: ['/home/me/repo/src/observer/parse.ts'],
      createdAt: t0,
    });
    const b = await w.add({
      title: 'Parser keeps unknown types',
      type: 'decision',
      concepts: ['trade-off'],
      filesRead: ['src/observer/types.ts'],
      createdAt: t0 + 86_400_000,
    });
    const c = await seedObservation(mate, w.projectId, w.sessionId, {
      title: 'Parser benchmark numbers',
      type: 'discovery',
      createdAt: t0 + 2 * 86_400_000,
      authorUserId: mate.userId,
    });
    const d = await seedObservation(w.ids, otherProject, otherSession, {
      title: 'Parser for the other repo',
      createdAt: t0,
    });
    const ids = async (q: Record<string, string | string[]>) =>
      (await search(w.id.token, { q: 'parser', ...q })).body.results.map((r) => r.id).sort();
    expect(await ids({})).toEqual([a, b, c, d].sort());
    expect(await ids({ project: w.key })).toEqual([a, b, c].sort());
    expect(await ids({ project: [w.key, otherKey] })).toEqual([a, b, c, d].sort());
    expect(await ids({ type: 'bugfix' })).toEqual([a]);
    expect(await ids({ type: 'bugfix,decision' })).toEqual([a, b].sort());
    expect(await ids({ concept: 'trade-off' })).toEqual([b]);
    expect(await ids({ file: 'src/observer/parse.ts' })).toEqual([a]);
    expect(await ids({ file: 'parse.ts' })).toEqual([a]);
    expect(await ids({ file: 'arse.ts' })).toEqual([]);
    expect(await ids({ file: './src/observer/types.ts' })).toEqual([b]);
    expect(await ids({ author: teammate.user })).toEqual([c]);
    expect(await ids({ since: new Date(t0 + 86_400_000).toISOString(), project: w.key })).toEqual([b, c].sort());
    expect(await ids({ until: String(t0 + 1000), project: w.key })).toEqual([a]);
    // Filters alone (no q) list newest first.
    const listed = await search(w.id.token, { project: w.key });
    expect(listed.body.results.map((r) => r.id)).toEqual([c, b, a]);
    expect(listed.body.total).toBe(3);
  });

  it('pages through results without overlap and reports the total', async () => {
    const w = await world();
    for (let i = 0; i < 7; i++) await w.add({ title: `Flaky integration test number ${i}` });
    const pages: number[][] = [];
    for (let offset = 0; offset < 9; offset += 3) {
      const { body } = await search(w.id.token, { q: 'flaky integration', limit: '3', offset: String(offset) });
      expect(body.total).toBe(7);
      pages.push(body.results.map((r) => r.id));
    }
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(new Set(pages.flat()).size).toBe(7);
  });

  it('renders format=text as one line per result with the id first and its evidence last', async () => {
    const w = await world();
    const id = await w.add({ title: 'Webhook retries use exponential backoff', type: 'decision' });
    const res = await call(`/api/search?q=webhook&format=text`, { token: w.id.token });
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const lines = (await res.text()).trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^1-1 of 1 \(mode (hybrid|fts)\)/);
    expect(lines[1]).toMatch(
      new RegExp(
        `^#${id}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d  decision  Webhook retries use exponential backoff  \\(${w.key}, @${w.id.user}, ~\\d+ tok\\)  evidence: unknown$`,
      ),
    );
  });

  it('never shows another team, a teammate’s private project, deleted rows, or others’ sensitive rows', async () => {
    const w = await world();
    const mallory = await newIdentity();
    const mIds = await idsOf(mallory);
    const mProject = await seedProject(mIds, w.key); // same key, other team
    const mSession = await seedSession(mIds, mProject, fresh('s'));
    await seedObservation(mIds, mProject, mSession, { title: 'Zebra secret of another team' });
    const mine = await w.add({ title: 'Zebra stripes in the theme' });
    const deleted = await w.add({ title: 'Zebra deleted row' });
    await env.DB.prepare('UPDATE observations SET deleted_at = ? WHERE id = ?').bind(Date.now(), deleted).run();
    const teammate = await newIdentity({ team: w.id.team });
    const mate = await idsOf(teammate);
    const privateProject = await seedProject(mate, `local/${teammate.user}/${fresh('p')}`, 'private');
    const privateSession = await seedSession(mate, privateProject, fresh('s'));
    await seedObservation(mate, privateProject, privateSession, { title: 'Zebra in a private project' });
    await seedObservation(mate, w.projectId, w.sessionId, {
      title: 'Zebra sensitive note',
      type: 'sensitive',
      authorUserId: mate.userId,
    });

    const { body } = await search(w.id.token, { q: 'zebra' });
    expect(body.results.map((r) => r.id)).toEqual([mine]);
    expect(body.total).toBe(1);
    const theirs = await search(teammate.token, { q: 'zebra' });
    expect(theirs.body.results.map((r) => r.title).sort()).toEqual([
      'Zebra in a private project',
      'Zebra sensitive note',
      'Zebra stripes in the theme',
    ]);
    // Asking for the other team's project by key looks exactly like asking for one that does not exist.
    const foreign = await search(mallory.token, { q: 'zebra', project: `github.com/acme/${fresh('nope')}` });
    const sameKey = await search(mallory.token, { q: 'zebra', project: w.key });
    expect(sameKey.body.results.map((r) => r.title)).toEqual(['Zebra secret of another team']);
    expect(foreign.body).toEqual({ results: [], total: 0, mode: 'fts' });
  });

  it('lets the team see sensitive rows when it opts in with share_sensitive', async () => {
    const w = await world();
    const teammate = await newIdentity({ team: w.id.team });
    const mate = await idsOf(teammate);
    await seedObservation(mate, w.projectId, w.sessionId, {
      title: 'Quokka sensitive note',
      type: 'sensitive',
      authorUserId: mate.userId,
    });
    expect((await search(w.id.token, { q: 'quokka' })).body.total).toBe(0);
    await env.DB.prepare(`UPDATE teams SET settings = '{"share_sensitive":true}' WHERE id = ?`)
      .bind(w.ids.teamId)
      .run();
    forgetTokenMemo();
    expect((await search(w.id.token, { q: 'quokka' })).body.total).toBe(1);
  });

  it('keeps the local-only bench routes behind the admin scope', async () => {
    const w = await world();
    const member = await newIdentity({ team: w.id.team });
    const seedBody = {
      project: w.key,
      session: 'b',
      observations: [{ type: 'change', title: 'x', narrative: 'y', created_at: 1 }],
    };
    expect((await call('/api/admin/bench/seed', { token: member.token, json: seedBody })).status).toBe(403);
    const ok = await call('/api/admin/bench/seed', { token: w.id.token, json: seedBody });
    expect(ok.status).toBe(201);
    expect(((await ok.json()) as { ids: number[] }).ids).toHaveLength(1);
  });

  it('refuses an unknown token', async () => {
    const res = await call('/api/search?q=x', { token: 'cairn_' + 'x'.repeat(40) });
    expect(res.status).toBe(401);
  });
});

describe('searchObservations with the vector side', () => {
  const authOf = async (w: SeedWorld): Promise<AuthContext> => ({
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
  const broken: VectorAdapters = {
    index: {
      name: 'broken',
      upsert: async () => {},
      deleteByIds: async () => {},
      query: async () => {
        throw new Error('vector backend down');
      },
    },
    embedder: { name: 'fine', dimensions: 2, minScore: 0, embed: async (t) => t.map(() => [1, 0]) },
  };
  const slow: VectorAdapters = {
    index: {
      name: 'slow',
      upsert: async () => {},
      deleteByIds: async () => {},
      query: () => new Promise<never>(() => {}),
    },
    embedder: broken.embedder,
  };

  it('falls back to FTS alone when the vector index throws', async () => {
    const w = await world();
    const id = await w.add({ title: 'Gremlin in the build cache' });
    const res = await searchObservations(env, await authOf(w), { q: 'gremlin' }, { vectors: broken });
    expect(res.mode).toBe('fts');
    expect(res.results.map((r) => r.id)).toEqual([id]);
    expect(res.results[0]).toMatchObject({
      projectKey: w.key,
      author: w.id.user,
      type: 'discovery',
      title: 'Gremlin in the build cache',
    });
  });

  it('falls back to FTS alone when the vector side lags past its deadline', async () => {
    const w = await world();
    const id = await w.add({ title: 'Goblin in the deploy script' });
    const res = await searchObservations(env, await authOf(w), { q: 'goblin' }, { vectors: slow, vectorTimeoutMs: 50 });
    expect(res.mode).toBe('fts');
    expect(res.results.map((r) => r.id)).toEqual([id]);
  });

  it('finds a fresh row by its words before the vector index has it', async () => {
    const w = await world();
    const id = await w.add({ title: 'Basilisk appears in the migration log' });
    const empty: VectorAdapters = {
      index: { ...broken.index, name: 'lagging', query: async () => [] },
      embedder: broken.embedder,
    };
    const res = await searchObservations(env, await authOf(w), { q: 'basilisk' }, { vectors: empty });
    expect(res.mode).toBe('hybrid');
    expect(res.results.map((r) => r.id)).toEqual([id]);
  });

  it('answers by keywords alone locally: the offline embedder has no say in the default ranking', async () => {
    const w = await world();
    await w.add({ title: 'Chimera token cache warmed at boot' });
    await w.add({ title: 'Sidebar colours', narrative: 'chimera mentioned once in passing' });
    const auth = await authOf(w);
    const dflt = await searchObservations(env, auth, { q: 'chimera cache', project: [w.key] });
    const fts = await searchObservations(env, auth, { q: 'chimera cache', project: [w.key], mode: 'fts' });
    expect(dflt.mode).toBe('fts');
    expect(dflt.results.map((r) => r.id)).toEqual(fts.results.map((r) => r.id));
  });

  it('keeps an exact keyword hit in the top 3 however loudly a noisy vector list disagrees', async () => {
    const w = await world();
    const exact = await w.add({ title: 'Manticore lock timeout in the queue worker' });
    const partial: number[] = [];
    for (let i = 0; i < 12; i++)
      partial.push(await w.add({ title: `Queue worker note ${i}`, narrative: 'manticore mentioned' }));
    const noisy: VectorAdapters = {
      index: {
        ...broken.index,
        name: 'noisy',
        query: async () => [...partial.reverse(), exact].map((id, i) => ({ id, score: 0.99 - i * 0.01 })),
      },
      embedder: broken.embedder,
    };
    const res = await searchObservations(
      env,
      await authOf(w),
      { q: 'manticore lock timeout', project: [w.key] },
      { vectors: noisy },
    );
    expect(res.mode).toBe('hybrid');
    expect(res.results.slice(0, 3).map((r) => r.id)).toContain(exact);
    expect(res.results[0]!.id).toBe(exact);
  });

  it("drops vector neighbours below the embedder's similarity floor", async () => {
    const w = await world();
    const keyword = await w.add({ title: 'Hydra retry budget' });
    const near = await w.add({ title: 'Unrelated words entirely' });
    const far = await w.add({ title: 'Other unrelated words' });
    const floored: VectorAdapters = {
      index: {
        ...broken.index,
        name: 'floored',
        query: async () => [
          { id: near, score: 0.8 },
          { id: far, score: 0.3 },
        ],
      },
      embedder: { ...broken.embedder, minScore: 0.5 },
    };
    const res = await searchObservations(env, await authOf(w), { q: 'hydra', project: [w.key] }, { vectors: floored });
    const ids = res.results.map((r) => r.id);
    expect(ids).toContain(keyword);
    expect(ids).toContain(near);
    expect(ids).not.toContain(far);
  });

  it('drops vector hits the caller may not read', async () => {
    const w = await world();
    const other = await world();
    const hidden = await other.add({ title: 'Other team row' });
    const mine = await w.add({ title: 'Wyvern notes' });
    const leaky: VectorAdapters = {
      index: {
        name: 'leaky',
        upsert: async () => {},
        deleteByIds: async () => {},
        query: async () => [
          { id: hidden, score: 0.99 },
          { id: mine, score: 0.9 },
        ],
      },
      embedder: broken.embedder,
    };
    const res = await searchObservations(env, await authOf(w), { q: 'anything at all' }, { vectors: leaky });
    expect(res.mode).toBe('hybrid');
    expect(res.results.map((r) => r.id)).toEqual([mine]);
  });

  it("keeps a teammate's private projects out of the vector query so they cannot crowd the top K", async () => {
    const w = await world();
    const mate = await newIdentity({ team: w.id.team });
    const mateIds = await idsOf(mate);
    const privateId = await seedProject(mateIds, `github.com/acme/${fresh('secret')}`, 'private');
    const asked: unknown[] = [];
    const spy: VectorAdapters = {
      index: {
        name: 'spy',
        upsert: async () => {},
        deleteByIds: async () => {},
        query: async (_v, q) => (asked.push(q), []),
      },
      embedder: broken.embedder,
    };
    await searchObservations(env, await authOf(w), { q: 'anything' }, { vectors: spy });
    expect(asked[0]).toMatchObject({ teamId: w.ids.teamId, excludeProjectIds: [privateId] });
    await searchObservations(env, await authOf(w), { q: 'anything', project: [w.key] }, { vectors: spy });
    expect(asked[1]).toMatchObject({ projectIds: [w.projectId] });
    expect((asked[1] as { excludeProjectIds?: unknown }).excludeProjectIds).toBeUndefined();
  });
});
