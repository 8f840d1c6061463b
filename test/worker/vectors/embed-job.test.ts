// The embed job: a team's records get their vectors in steps, one chunk of at most 100 texts embedded, upserted
// and marked at a time, each step within its budget on Paid and on Free; `all` embeds every live record again.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { metered } from '../../../src/db/meter';
import { stepContext } from '../../../src/jobs/step';
import { startJob } from '../../../src/jobs/start';
import { embedJob } from '../../../src/vectors/embed-job';
import { chunkRecords, EMBED_CHUNK_TEXTS, type LoadedRecord } from '../../../src/vectors/index-records';
import { LOCAL_DIMENSIONS } from '../../../src/vectors/local-embedder';
import { runJob } from '../support/jobs';
import { seedWorld, type SeedWorld } from '../support/seed';

const count = async (sql: string, ...binds: unknown[]) =>
  (await env.DB.prepare(sql)
    .bind(...binds)
    .first<{ n: number }>())!.n;

/** `n` observations with `facts` facts each, none embedded. */
async function world(n: number, facts: number): Promise<SeedWorld> {
  const w = await seedWorld();
  for (let i = 0; i < n; i++)
    await w.add({
      title: `Record ${i} about caching`,
      narrative: `Narrative ${i}`,
      facts: Array.from({ length: facts }, (_, f) => `fact ${f} of ${i}`),
    });
  return w;
}

describe('the embed job', () => {
  it('gives every record of the team its vectors in bounded steps, never holding more than one chunk of vectors', async () => {
    const w = await world(60, 2);
    await w.summary({ request: 'Summarised the caching work' });
    const job = await startJob(env, embedJob, w.ids.teamId, { mode: 'missing' });
    expect(job.progress).toMatchObject({ done: 0, total: null, unit: 'records' });
    const done = await runJob(w.ids.teamId, job.id);
    expect(done.status).toBe('done');
    expect(done.progress).toMatchObject({ done: 61, total: 61 });
    expect(
      await count('SELECT count(*) AS n FROM observations WHERE team_id = ? AND embedded_at IS NULL', w.ids.teamId),
    ).toBe(0);
    // 60 observations × (main text + 2 facts) + 1 summary.
    expect(await count('SELECT count(*) AS n FROM local_vectors WHERE team_id = ?', w.ids.teamId)).toBe(181);
    // 181 texts in chunks of at most 100: more than one chunk, and never more than one held at once.
    expect(done.stats.held.max).toBeGreaterThan(0);
    expect(done.stats.held.max).toBeLessThanOrEqual(EMBED_CHUNK_TEXTS * LOCAL_DIMENSIONS * 8);
    expect(done.stats.statements.max).toBeLessThanOrEqual(done.stats.budget.statements);
  });

  it('stays within a Free plan step (40 statements, under the 50 an invocation may send)', async () => {
    const w = await world(80, 3);
    const free = { statements: 40, ms: 5_000, bytes: 16 * 1024 * 1024, subrequests: 40 };
    let cursor = embedJob.init({ mode: 'missing' }, { teamId: w.ids.teamId, now: Date.now() }).cursor;
    const statements: number[] = [];
    for (let step = 0; step < 50; step++) {
      const ctx = stepContext({ env, jobId: 'free', teamId: w.ids.teamId, actorUserId: null, budget: free });
      const out = await metered(env, 'free step', () => embedJob.step(ctx, { mode: 'missing' }, cursor));
      statements.push(ctx.cost().statements);
      cursor = out.cursor;
      if (out.done) break;
    }
    expect(cursor.done).toBe(80);
    expect(statements.length).toBeGreaterThan(1);
    expect(Math.max(...statements)).toBeLessThanOrEqual(40);
  });

  it('embeds every live record again in mode all, and passes over deleted ones', async () => {
    const w = await world(5, 0);
    const first = await runJob(w.ids.teamId, (await startJob(env, embedJob, w.ids.teamId, { mode: 'missing' })).id);
    expect(first.progress.done).toBe(5);
    const gone = await w.add({ title: 'Deleted later' });
    await env.DB.prepare('UPDATE observations SET deleted_at = 1 WHERE id = ?').bind(gone).run();
    await env.DB.prepare('UPDATE observations SET embedded_at = 7 WHERE team_id = ? AND deleted_at IS NULL')
      .bind(w.ids.teamId)
      .run();
    const again = await runJob(w.ids.teamId, (await startJob(env, embedJob, w.ids.teamId, { mode: 'all' })).id);
    expect(again.progress).toMatchObject({ done: 5, total: 5 });
    expect(
      await count('SELECT count(*) AS n FROM observations WHERE team_id = ? AND embedded_at = 7', w.ids.teamId),
    ).toBe(0);
    expect(
      await count("SELECT count(*) AS n FROM local_vectors WHERE record_id = ? AND kind = 'observation'", gone),
    ).toBe(0);
  });
});

describe('chunkRecords', () => {
  const rec = (id: number, texts: number): LoadedRecord => ({
    kind: 'observation',
    id,
    projectId: 1,
    type: 'discovery',
    texts: Array.from({ length: texts }, (_, i) => `t${i}`),
  });

  it('keeps each chunk at or under the text limit and a record whole', () => {
    const chunks = chunkRecords([rec(1, 9), rec(2, 9), rec(3, 5)], { texts: 18 });
    expect(chunks.map((c) => c.map((r) => r.id))).toEqual([[1, 2], [3]]);
    expect(chunkRecords([rec(1, 30)], { texts: 18 }).map((c) => c.length)).toEqual([1]);
  });
});
