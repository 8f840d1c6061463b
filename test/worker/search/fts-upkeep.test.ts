// FTS upkeep without whole-index commands: a forget deletes the row from every table at once and asks for an
// upkeep cycle; the cycle's bounded merges take the forgotten terms out of the index segments, each step within
// its statement budget; the daily check refills an index a restore emptied, in windows, so search works again.
// Checked by scanning the index's segment blobs, not through search.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { watchInvocations, type Usage } from '../../../src/db/meter';
import { ftsMerge, ftsSegments } from '../../../src/db/fts';
import { CAPPED_FOLLOW_UP_MS, ftsUpkeepJob, startDailyFtsUpkeep } from '../../../src/search/fts-upkeep';
import { stepContext } from '../../../src/jobs/step';
import { configOf } from '../../../src/config';
import { runInDurableObject } from 'cloudflare:test';
import { call } from '../support/http';
import { jobRecord } from '../../../src/jobs/job-do';
import { finishJob, jobOf, lane, runJob } from '../support/jobs';
import { seedWorld } from '../support/seed';

// Ends in a digit: FTS5's porter stemmer leaves it as written, and segments store a word's tail contiguously.
const word = () => `fup${Math.random().toString(36).slice(2, 10)}7`;

const inSegments = async (w: string) =>
  (await env.DB.prepare('SELECT COUNT(*) AS n FROM observations_fts_data WHERE instr(CAST(block AS TEXT), ?) > 0')
    .bind(w.slice(-7))
    .first<{ n: number }>())!.n;
const matches = async (w: string) =>
  (await env.DB.prepare(`SELECT COUNT(*) AS n FROM observations_fts WHERE observations_fts MATCH '"${w}"'`).first<{
    n: number;
  }>())!.n;

/** Every metered invocation (requests, job steps) while `fn` runs. */
async function invocations<T>(fn: () => Promise<T>): Promise<{ out: T; seen: Usage[] }> {
  const seen: Usage[] = [];
  const stop = watchInvocations((u) => seen.push(u));
  try {
    return { out: await fn(), seen };
  } finally {
    stop();
  }
}

describe('FTS upkeep', { timeout: 120_000 }, () => {
  it('forgets a row at once without a whole-index command, and its terms leave the index segments within one upkeep cycle', async () => {
    const w = await seedWorld();
    const secret = word();
    const target = await w.add({ title: `The ${secret} token`, narrative: `${secret} is kept in the vault` });
    // Enough other rows, in many transactions, that the secret sits in an older segment than the delete marker.
    for (let i = 0; i < 40; i++) await w.add({ title: `filler ${i} ${word()}`, narrative: 'routine work '.repeat(40) });
    const before = await inSegments(secret);
    expect(before).toBeGreaterThan(0);

    const { out: res, seen } = await invocations(() =>
      call('/api/forget', { token: w.id.token, json: { kind: 'observation', id: target } }),
    );
    expect(res.status).toBe(200);
    expect(await matches(secret)).toBe(0);
    expect(
      (await env.DB.prepare('SELECT COUNT(*) AS n FROM observations WHERE id = ?').bind(target).first<{ n: number }>())!
        .n,
    ).toBe(0);
    expect(
      seen.flatMap((u) => u.wholeIndex),
      'whole-index FTS commands sent by the forget request',
    ).toEqual([]);

    // The cycle the forget asked for, run to its end (its lane's own alarm may have run it already: the forget
    // request's later work, dropping the session's conversation, gives it the time).
    const { out: cycles, seen: steps } = await invocations(async () => {
      const asked = (await lane(null).list(1, 'fts-upkeep')).map(jobRecord);
      return Promise.all(asked.map((j) => runJob(null, j.id)));
    });
    expect(cycles.length).toBeGreaterThan(0);
    expect(cycles.every((j) => j.status === 'done')).toBe(true);
    expect(await inSegments(secret)).toBe(0);
    expect(steps.flatMap((u) => u.wholeIndex)).toEqual([]);
    for (const j of cycles) {
      expect(j.stats.statements.max).toBeLessThanOrEqual(j.stats.budget.statements);
      expect(j.result).toMatchObject({ shard: 'DB', capped: false, segments: { observations_fts: 1 } });
    }
  });

  // The upkeep's loop trusts FTS5's documented stopping rule for 'merge' with a negative count (sqlite.org/fts5.html,
  // "The 'merge' Command": run it until the change count before and after differs by less than two, and the index
  // is optimized as by 'optimize'), read through D1's meta.changes. Shown on the real index here.
  it('merges while the index has more than one segment and stops at one segment with a no-op; a new segment starts it again', async () => {
    const w = await seedWorld();
    // One segment a transaction (a row a statement), and delete markers of a few rows in segments of their own.
    const ids: number[] = [];
    for (let i = 0; i < 24; i++)
      ids.push(await w.add({ title: `merge probe ${i} ${word()}`, narrative: 'segment filler '.repeat(30) }));
    for (const id of ids.slice(0, 3)) await env.DB.prepare('DELETE FROM observations WHERE id = ?').bind(id).run();
    const start = await ftsSegments(env.DB, 'observations_fts');
    expect(start).toBeGreaterThan(1);
    // A small page count, so the work takes several merges; each one that reports work is followed by another.
    let merges = 0;
    while (await ftsMerge(env.DB, 'observations_fts', 4)) {
      merges++;
      expect(merges, 'merges reporting work without end').toBeLessThan(2_000);
    }
    expect(merges).toBeGreaterThan(0);
    expect(await ftsSegments(env.DB, 'observations_fts')).toBe(1);
    // Nothing left: the next merge is a no-op, and says so (one change: the command's own row).
    const noop = await env.DB.prepare(
      "INSERT INTO observations_fts(observations_fts, rank) VALUES ('merge', -4)",
    ).run();
    expect(noop.meta.changes).toBeLessThan(2);
    expect(await ftsMerge(env.DB, 'observations_fts', 4)).toBe(false);
    expect(await ftsSegments(env.DB, 'observations_fts')).toBe(1);
    // A new segment makes the next merge report work again.
    await w.add({ title: `after the merge ${word()}` });
    expect(await ftsSegments(env.DB, 'observations_fts')).toBe(2);
    expect(await ftsMerge(env.DB, 'observations_fts', 4)).toBe(true);
  });

  it('asks for another cycle a minute later when one ends capped, so what it left in the segments goes too', async () => {
    // A cycle whose merges reached their cap (writes during it kept restarting the merge) before its last index.
    const now = Date.now();
    const ctx = stepContext({
      env,
      jobId: 'inline',
      teamId: null,
      actorUserId: null,
      budget: configOf(env).jobStep,
      clock: () => now,
    });
    const { cursor } = ftsUpkeepJob.init({ shard: 'DB', check: false }, { teamId: null, now });
    const out = await ftsUpkeepJob.step(ctx, { shard: 'DB', check: false }, { ...cursor, cap: 0 });
    expect(out).toMatchObject({ done: true, result: { capped: true } });
    const next = await runInDurableObject(lane(null), async (_o, state) =>
      state.storage.sql
        .exec<{ id: string; next_at: number }>(
          "SELECT id, next_at FROM jobs WHERE kind = 'fts-upkeep' AND status = 'queued' AND dedupe = 'fts-upkeep:DB:merge'",
        )
        .toArray(),
    );
    expect(next).toHaveLength(1);
    expect(next[0]!.next_at).toBeGreaterThanOrEqual(now + CAPPED_FOLLOW_UP_MS);
    expect((await finishJob(null, next[0]!.id)).status).toBe('done');
  });

  it('refills an index a restore emptied, a window at a time, so search finds the rows again', async () => {
    const w = await seedWorld();
    const term = word();
    for (let i = 0; i < 5; i++) await w.add({ title: `Restored ${term} ${i}` });
    // What a restore from `wrangler d1 export` leaves: the tables without their FTS5 index.
    await env.DB.prepare("INSERT INTO observations_fts(observations_fts) VALUES ('delete-all')").run();
    expect(await matches(term)).toBe(0);

    const [id] = await startDailyFtsUpkeep(env);
    const job = await runJob(null, id!);
    expect(job.status).toBe('done');
    expect(job.result).toMatchObject({ out_of_step: expect.arrayContaining(['observations_fts']) });
    expect(await matches(term)).toBe(5);
    // A second cycle finds nothing to refill.
    const [again] = await startDailyFtsUpkeep(env);
    expect((await runJob(null, again!)).result).toMatchObject({ out_of_step: [], refilled: 0 });
  });

  it('empties and refills an index that holds rows its table lost, instead of rebuilding it in one statement', async () => {
    const w = await seedWorld();
    const term = word();
    const kept = await w.add({ title: `Kept ${term}` });
    const lost = await w.add({ title: `Lost ${term}` });
    // A partial restore: the row is gone from the table, its index entry is not (the trigger is bypassed).
    await env.DB.prepare('DROP TRIGGER observations_fts_ad').run();
    try {
      await env.DB.prepare('DELETE FROM observation_files WHERE observation_id = ?').bind(lost).run();
      await env.DB.prepare('DELETE FROM local_vectors WHERE record_id = ?').bind(lost).run();
      await env.DB.prepare('DELETE FROM observations WHERE id = ?').bind(lost).run();
    } finally {
      await env.DB.prepare(
        `CREATE TRIGGER observations_fts_ad AFTER DELETE ON observations BEGIN
           INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, facts, concepts, cjk_terms, fts_scope)
           VALUES ('delete', old.id, old.title, old.subtitle, old.narrative, old.facts, old.concepts, old.cjk_terms, old.fts_scope);
         END`,
      ).run();
    }
    const [id] = await startDailyFtsUpkeep(env);
    const job = await runJob(null, id!);
    expect(job.result).toMatchObject({ cleared: ['observations_fts'] });
    const rows = await env.DB.prepare(
      `SELECT rowid AS id FROM observations_fts WHERE observations_fts MATCH '"${term}"'`,
    ).all<{ id: number }>();
    expect(rows.results.map((r) => r.id)).toEqual([kept]);
    expect(await jobOf(null, id!)).toMatchObject({ status: 'done' });
  });
});
