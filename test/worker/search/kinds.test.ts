// GET /api/search with kind=summaries|prompts|all: found by words (English and CJK), filters, RRF merge, visibility.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { storePrompt } from '../../../src/store/sessions';
import { call, fresh, newIdentity, type TestIdentity } from '../support/http';
import { idsOf, seedProject, seedSession, seedSummary, type Ids, seedWorld, type SeedWorld } from '../support/seed';

interface Hit {
  kind?: 'observation' | 'summary' | 'prompt';
  id: number;
  type: string;
  title: string;
  project: string;
  author: string;
}
interface Body {
  results: Hit[];
  total: number;
  mode: 'hybrid' | 'fts';
}

async function search(token: string, query: Record<string, string>): Promise<{ status: number; body: Body }> {
  const res = await call(`/api/search?${new URLSearchParams(query)}`, { token });
  return { status: res.status, body: (await res.json()) as Body };
}

const refs = (b: Body) => b.results.map((r) => `${r.kind}:${r.id}`);

let promptNumber = 0;
async function addPrompt(
  ids: Ids,
  projectId: number,
  sessionId: number,
  text: string,
  createdAt = Date.now(),
): Promise<number> {
  await storePrompt(env.DB, {
    teamId: ids.teamId,
    projectId,
    sessionDbId: sessionId,
    promptNumber: ++promptNumber,
    text,
    authorUserId: ids.userId,
    createdAt,
  });
  const row = await env.DB.prepare('SELECT id FROM prompts WHERE session_id = ? AND prompt_number = ?')
    .bind(sessionId, promptNumber)
    .first<{ id: number }>();
  return row!.id;
}

interface World extends SeedWorld {
  prompt(text: string, at?: number): Promise<number>;
  observation(title: string, at?: number): Promise<number>;
}

async function world(identity?: TestIdentity, visibility: 'team' | 'private' = 'team'): Promise<World> {
  const w = await seedWorld({ identity, visibility });
  return {
    ...w,
    prompt: (text, at) => addPrompt(w.ids, w.projectId, w.sessionId, text, at),
    observation: (title, at) => w.add({ title, createdAt: at }),
  };
}

describe('GET /api/search?kind=…', () => {
  it('finds a session summary and a prompt by their English words and by a Chinese two-character term', async () => {
    const w = await world();
    const sum = await w.summary({
      request: 'Tune the API throttle',
      learned: 'We decided the rate limiter counts per token, not per IP',
    });
    const prompt = await w.prompt('what did we decide about the rate limiter for webhooks?');
    const zhSum = await w.summary({ request: '调整缓存', learned: '决定缓存五分钟' });
    const zhPrompt = await w.prompt('为什么登录令牌过期了');

    const s = await search(w.id.token, { q: 'rate limiter decided', kind: 'summaries' });
    expect(s.status).toBe(200);
    expect(refs(s.body)).toEqual([`summary:${sum}`]);
    expect(s.body.results[0]).toMatchObject({
      type: 'summary',
      title: 'Tune the API throttle',
      project: w.key,
      author: w.id.user,
    });
    expect(refs((await search(w.id.token, { q: 'webhooks limiter', kind: 'prompts' })).body)).toEqual([
      `prompt:${prompt}`,
    ]);
    expect(refs((await search(w.id.token, { q: '缓存', kind: 'summaries' })).body)).toEqual([`summary:${zhSum}`]);
    expect(refs((await search(w.id.token, { q: '令牌', kind: 'prompts' })).body)).toEqual([`prompt:${zhPrompt}`]);
    expect(refs((await search(w.id.token, { q: '登录令牌', kind: 'all' })).body)).toEqual([`prompt:${zhPrompt}`]);
  });

  it('keeps the default observation-only answer without a kind field, and each kind returns only its own records', async () => {
    const w = await world();
    const obs = await w.observation('Pelican cache warmup');
    const sum = await w.summary({ learned: 'Pelican cache needs warmup' });
    const prompt = await w.prompt('why is the pelican cache cold?');
    const dflt = await search(w.id.token, { q: 'pelican' });
    expect(dflt.body.results.map((r) => r.id)).toEqual([obs]);
    expect(dflt.body.results[0]!.kind).toBeUndefined();
    expect(dflt.body.total).toBe(1);
    expect(refs((await search(w.id.token, { q: 'pelican', kind: 'observations' })).body)).toEqual([
      `observation:${obs}`,
    ]);
    expect(refs((await search(w.id.token, { q: 'pelican', kind: 'summaries' })).body)).toEqual([`summary:${sum}`]);
    expect(refs((await search(w.id.token, { q: 'pelican', kind: 'prompts' })).body)).toEqual([`prompt:${prompt}`]);
    const all = await search(w.id.token, { q: 'pelican', kind: 'all' });
    expect(refs(all.body).sort()).toEqual([`observation:${obs}`, `prompt:${prompt}`, `summary:${sum}`].sort());
    expect(all.body.total).toBe(3);
    // type, concept and file describe observations: giving one leaves summaries and prompts out.
    expect(refs((await search(w.id.token, { q: 'pelican', kind: 'all', type: 'discovery' })).body)).toEqual([
      `observation:${obs}`,
    ]);
    expect((await search(w.id.token, { q: 'pelican', kind: 'prompts', file: 'src/a.ts' })).body).toEqual({
      results: [],
      total: 0,
      mode: 'fts',
    });
    // Author and project filters apply to every kind.
    expect(refs((await search(w.id.token, { q: 'pelican', kind: 'all', author: 'nobody-here' })).body)).toEqual([]);
    expect((await search(w.id.token, { q: 'pelican', kind: 'all', project: w.key })).body.total).toBe(3);
    const bad = await call(`/api/search?q=pelican&kind=everything`, { token: w.id.token });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_query');
  });

  it('merges kinds by RRF: each kind keeps its own order, the best of each leads, and pages do not overlap', async () => {
    const w = await world();
    const o1 = await w.observation('Heron deploy heron rollback heron');
    const o2 = await w.observation('Heron mentioned once in a long title about other deploy things');
    const s1 = await w.summary({ request: 'Heron heron rollback', learned: 'heron rollback works' });
    const p1 = await w.prompt('heron heron rollback please');
    const p2 = await w.prompt('is heron anywhere in the unrelated notes about other words');
    const all = await search(w.id.token, { q: 'heron', kind: 'all', mode: 'fts' });
    const order = refs(all.body);
    expect(all.body.total).toBe(5);
    expect(order.slice(0, 3).sort()).toEqual([`observation:${o1}`, `prompt:${p1}`, `summary:${s1}`].sort());
    expect(order.filter((r) => r.startsWith('observation'))).toEqual(
      refs((await search(w.id.token, { q: 'heron', kind: 'observations', mode: 'fts' })).body),
    );
    expect(order.filter((r) => r.startsWith('prompt'))).toEqual(
      refs((await search(w.id.token, { q: 'heron', kind: 'prompts' })).body),
    );
    expect(order.indexOf(`observation:${o2}`)).toBeGreaterThan(2);
    expect(order.indexOf(`prompt:${p2}`)).toBeGreaterThan(2);
    const pages = [];
    for (const offset of ['0', '2', '4'])
      pages.push(
        ...refs((await search(w.id.token, { q: 'heron', kind: 'all', mode: 'fts', limit: '2', offset })).body),
      );
    expect(pages).toEqual(order);
  });

  it('lists every kind newest first when only filters are given', async () => {
    const w = await world();
    const t0 = Date.UTC(2026, 2, 1);
    const s = await w.summary({ request: 'oldest', createdAt: t0 });
    const o = await w.observation('middle', t0 + 1000);
    const p = await w.prompt('newest', t0 + 2000);
    const listed = await search(w.id.token, { project: w.key, kind: 'all' });
    expect(refs(listed.body)).toEqual([`prompt:${p}`, `observation:${o}`, `summary:${s}`]);
    expect(listed.body.total).toBe(3);
    expect(refs((await search(w.id.token, { project: w.key, kind: 'all', limit: '1', offset: '1' })).body)).toEqual([
      `observation:${o}`,
    ]);
  });

  it("never returns another team's summary or prompt, even under the same project key", async () => {
    const w = await world();
    const mallory = await newIdentity();
    const m = await idsOf(mallory);
    const mProject = await seedProject(m, w.key);
    const mSession = await seedSession(m, mProject, fresh('s'));
    await seedSummary(m, mProject, mSession, { learned: 'Ocelot secret of another team' });
    await addPrompt(m, mProject, mSession, 'ocelot secret prompt of another team');
    const mine = await w.prompt('ocelot in my own prompt');
    const probes: Record<string, string>[] = [
      { q: 'ocelot', kind: 'all' },
      { q: 'ocelot', kind: 'all', project: w.key },
      { project: w.key, kind: 'all' },
    ];
    for (const q of probes) {
      const { body } = await search(w.id.token, q);
      expect(refs(body), JSON.stringify(q)).toEqual([`prompt:${mine}`]);
      expect(JSON.stringify(body)).not.toContain('another team');
    }
    const theirs = await search(mallory.token, { q: 'ocelot', kind: 'all' });
    expect(theirs.body.total).toBe(2);
  });

  it("never returns a teammate's prompt or summary from their private project, until the project is made team-visible", async () => {
    const me = await world();
    const mate = await newIdentity({ team: me.id.team });
    const theirs = await world(mate, 'private');
    await theirs.prompt('narwhal plans in a private project');
    await theirs.summary({ learned: 'narwhal private learning' });
    await theirs
      .summary({ learned: 'narwhal deleted learning' })
      .then((id) => env.DB.prepare('UPDATE summaries SET deleted_at = 1 WHERE id = ?').bind(id).run());
    expect((await search(me.id.token, { q: 'narwhal', kind: 'all' })).body).toEqual({
      results: [],
      total: 0,
      mode: 'fts',
    });
    expect((await search(me.id.token, { q: 'narwhal', kind: 'prompts', project: theirs.key })).body.total).toBe(0);
    // The author still finds their own private prompt and summary (never the deleted one).
    expect((await search(mate.token, { q: 'narwhal', kind: 'all' })).body.results.map((r) => r.kind).sort()).toEqual([
      'prompt',
      'summary',
    ]);
    await env.DB.prepare(`UPDATE projects SET visibility = 'team' WHERE id = ?`).bind(theirs.projectId).run();
    expect((await search(me.id.token, { q: 'narwhal', kind: 'all' })).body.total).toBe(2);
  });

  it('answers hostile query text with 200 for every kind', async () => {
    const w = await world();
    await w.prompt('NEAR and OR are operators; "quotes" must be doubled');
    await w.summary({ learned: 'fts5 "quotes" (NEAR) rules' });
    const hostile = [
      '"',
      '""',
      '"unbalanced',
      '(',
      '{title}: x',
      '{cjk_terms}: x',
      'fts_scope : x',
      '*',
      'NEAR(a b)',
      'a OR',
      'NOT',
      '^start',
      'col:val',
      '🔥🚀',
      "'; DROP TABLE prompts; --",
      '\u0000',
      'x'.repeat(900),
      '缓',
      'fts5 "quotes" (NEAR)',
    ];
    for (const kind of ['summaries', 'prompts', 'all']) {
      for (const q of hostile) {
        const { status, body } = await search(w.id.token, { q, kind });
        expect(status, `${kind} ${JSON.stringify(q)}`).toBe(200);
        expect(Array.isArray(body.results)).toBe(true);
      }
    }
    expect(
      refs((await search(w.id.token, { q: 'fts5 "quotes" (NEAR)', kind: 'all' })).body)
        .map((r) => r.split(':')[0])
        .sort(),
    ).toEqual(['prompt', 'summary']);
    const count = await env.DB.prepare('SELECT count(*) AS n FROM prompts WHERE team_id = ?')
      .bind(w.ids.teamId)
      .first<{ n: number }>();
    expect(count?.n).toBe(1);
  });

  it('renders S and P ids in format=text', async () => {
    const w = await world();
    const sum = await w.summary({ request: 'Kestrel timeouts', learned: 'kestrel needs 30 s' });
    const prompt = await w.prompt('fix the kestrel timeouts');
    const lines = (await (await call(`/api/search?q=kestrel&kind=all&format=text`, { token: w.id.token })).text())
      .trim()
      .split('\n');
    expect(lines[0]).toMatch(/^1-2 of 2 .*S12.*P7/);
    expect(
      lines
        .slice(1)
        .map((l) => l.split('  ')[0])
        .sort(),
    ).toEqual([`P${prompt}`, `S${sum}`]);
    expect(lines.find((l) => l.startsWith(`S${sum}`))).toMatch(
      new RegExp(`  summary  Kestrel timeouts  \\(${w.key}, @${w.id.user}, ~\\d+ tok\\)$`),
    );
  });
});
