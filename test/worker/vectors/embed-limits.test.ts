// Embedding against Workers AI's documented limits (a fake bge-m3 that refuses what Cloudflare says it refuses:
// support/fake-workers-ai.ts): long records are sent in calls that fit the model's window, a record the model
// refuses counts a failure once a run and is skipped after three while every other record gets its vector, and an
// embedder that is down fails the step without charging any record. The job runs on the real D1.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { embedJob } from '../../../src/vectors/embed-job';
import { WorkersAiEmbedder } from '../../../src/vectors/workers-ai-embedder';
import { call, fresh } from '../support/http';
import { FakeVectorize, productionVectorEnv } from '../support/fake-vectorize';
import { BGE_M3_MAX_TEXTS, BGE_M3_WINDOW_TOKENS, FakeWorkersAi } from '../support/fake-workers-ai';
import { runKindInline } from '../support/jobs';
import { seedWorld } from '../support/seed';

const WORDS = 'cache invalidation happens when the worker restarts and the pool drains its idle sockets'.split(' ');
/** English prose of about `chars` characters. */
const prose = (chars: number, seed: number) => {
  const out: string[] = [];
  for (let n = 0, i = seed; n < chars; i++) {
    const w = WORDS[i % WORDS.length]!;
    out.push(w);
    n += w.length + 1;
  }
  return out.join(' ');
};
/** CJK text of `chars` characters (a token each). */
const cjk = (chars: number) => '缓存失效发生在工作进程重启时'.repeat(Math.ceil(chars / 14)).slice(0, chars);

const failuresOf = async (teamId: number) =>
  (
    await env.DB.prepare(
      'SELECT id, embed_failures AS f, embedded_at AS e FROM observations WHERE team_id = ? ORDER BY id',
    )
      .bind(teamId)
      .all<{ id: number; f: number; e: number | null }>()
  ).results;

describe('embedding within bge-m3’s documented limits', () => {
  it('sends long records in calls that fit the model’s window, and gives every record its vector', async () => {
    const w = await seedWorld();
    for (let i = 0; i < 40; i++)
      await w.add({ title: `Long record ${i}`, narrative: prose(7_900, i), facts: [`fact ${i}`, `other ${i}`] });
    for (let i = 0; i < 10; i++) await w.add({ title: `长记录 ${i}`, narrative: cjk(6_000) });
    const ai = new FakeWorkersAi();
    const out = await runKindInline(productionVectorEnv(new FakeVectorize(), ai), embedJob, w.ids.teamId, {
      mode: 'missing',
    });
    expect(out.result).toEqual({ embedded: 50, failed: 0, mode: 'missing' });
    expect(ai.calls.filter((c) => c.refused !== null)).toEqual([]);
    expect(Math.max(...ai.calls.map((c) => c.tokens))).toBeLessThanOrEqual(BGE_M3_WINDOW_TOKENS);
    expect(Math.max(...ai.calls.map((c) => c.texts))).toBeLessThanOrEqual(BGE_M3_MAX_TEXTS);
    // 40 × 3 + 10 texts would be two calls by count alone; by the window it takes more.
    expect(ai.calls.length).toBeGreaterThan(2);
    expect((await failuresOf(w.ids.teamId)).filter((r) => r.e === null)).toEqual([]);
  });

  it('splits what it is asked to embed by estimated tokens as well as by count', async () => {
    const ai = new FakeWorkersAi();
    const texts = Array.from({ length: 30 }, () => cjk(8_000));
    const out = await new WorkersAiEmbedder(ai).embed(texts);
    expect(out).toHaveLength(30);
    expect(ai.calls.map((c) => c.refused)).toEqual(ai.calls.map(() => null));
    // 8,000 estimated tokens a text under 40,000 a call: 5 texts a call.
    expect(ai.calls.map((c) => c.texts)).toEqual([5, 5, 5, 5, 5, 5]);
  });

  it('counts a failure against a record the model refuses, once a run, and skips it after three; the rest get their vectors and health counts it', async () => {
    const w = await seedWorld();
    const marker = fresh('UNREADABLE');
    const ids: number[] = [];
    for (let i = 0; i < 12; i++)
      ids.push(await w.add({ title: i === 5 ? `Record ${i} ${marker}` : `Record ${i}`, narrative: prose(400, i) }));
    const bad = ids[5]!;
    const ai = new FakeWorkersAi();
    ai.refuses = (t) => t.includes(marker);
    const prod = productionVectorEnv(new FakeVectorize(), ai);
    const run = () => runKindInline(prod, embedJob, w.ids.teamId, { mode: 'missing' });

    const first = await run();
    expect(first.result).toEqual({ embedded: 11, failed: 1, mode: 'missing' });
    const after1 = await failuresOf(w.ids.teamId);
    expect(after1.filter((r) => r.e === null).map((r) => [r.id, r.f])).toEqual([[bad, 1]]);
    // One chunk refused, halved down to the record (≤ 2 calls a halving of 12), and one probe.
    expect(ai.calls.length).toBeLessThanOrEqual(1 + 2 * Math.ceil(Math.log2(12)) + 1);

    for (const n of [2, 3]) {
      expect((await run()).result).toEqual({ embedded: 0, failed: 1, mode: 'missing' });
      expect((await failuresOf(w.ids.teamId)).find((r) => r.id === bad)!.f).toBe(n);
    }
    // Skipped: a fourth run finds nothing to embed and asks the model nothing.
    const calls = ai.calls.length;
    const fourth = await run();
    expect(fourth.result).toEqual({ embedded: 0, failed: 0, mode: 'missing' });
    expect(fourth.progress.total).toBe(0);
    expect(ai.calls.length).toBe(calls);

    const health = await call('/api/admin/health', { token: w.id.token });
    expect(health.status).toBe(200);
    expect(((await health.json()) as { vectors: { skipped: number } }).vectors).toEqual({ skipped: 1 });
  });

  it('charges no record when the embedder is down: the step fails and is retried later', async () => {
    const w = await seedWorld();
    for (let i = 0; i < 3; i++) await w.add({ title: `Record ${i}`, narrative: prose(200, i) });
    const ai = new FakeWorkersAi();
    ai.down = true;
    await expect(
      runKindInline(productionVectorEnv(new FakeVectorize(), ai), embedJob, w.ids.teamId, { mode: 'missing' }),
    ).rejects.toThrow(/3040/);
    expect((await failuresOf(w.ids.teamId)).map((r) => [r.f, r.e])).toEqual([
      [0, null],
      [0, null],
      [0, null],
    ]);
  });
});
