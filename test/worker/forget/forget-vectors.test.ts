// Privacy is a property of storage, vectors included: forgetting a record, a session or a project, the retention
// sweep and moving a team to another database leave no vector of any kind or part behind — read back from the
// local_vectors table and from the contents of an in-memory Vectorize index behind the production adapters.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../../../src/auth/types';
import type { CairnEnv } from '../../../src/env';
import { forgetRecord, forgetSession, purgeProject } from '../../../src/forget/service';
import { retentionSweepJob } from '../../../src/retention/sweep-job';
import { storePrompt } from '../../../src/store/sessions';
import { moveNow } from '../support/move';
import { indexRecords } from '../../../src/vectors/index-records';
import { call } from '../support/http';
import { FakeVectorize, productionVectorEnv } from '../support/fake-vectorize';
import { forgetProjectJob } from '../../../src/forget/project-job';
import { runKindInline } from '../support/jobs';
import { seedWorld, type SeedWorld } from '../support/seed';

const DAY = 86_400_000;

const authOf = (w: SeedWorld): AuthContext => ({
  tokenId: 0,
  teamId: w.ids.teamId,
  teamSlug: w.id.team,
  userId: w.ids.userId,
  handle: w.id.user,
  role: 'owner',
  deviceId: null,
  deviceName: null,
  scopes: ['read', 'ingest'],
});

interface Remembered {
  obs: number;
  sum: number;
  prompt: number;
}

/** An observation with two facts, a summary and a prompt in the world's session, all embedded through `e`. */
async function remembered(w: SeedWorld, e: CairnEnv, at = Date.now(), promptNumber = 1): Promise<Remembered> {
  const obs = await w.add({
    title: 'Staging key rotation',
    facts: ['The key rotates weekly', 'Rotation runs at 02:00 UTC'],
    createdAt: at,
  });
  const sum = await w.summary({ request: 'Rotate the staging key', learned: 'It rotates weekly', createdAt: at });
  await storePrompt(env.DB, {
    teamId: w.ids.teamId,
    projectId: w.projectId,
    sessionDbId: w.sessionId,
    promptNumber,
    text: 'when does the key rotate?',
    authorUserId: w.ids.userId,
    createdAt: at,
  });
  const prompt = (await env.DB.prepare('SELECT id FROM prompts WHERE session_id = ? AND prompt_number = ?')
    .bind(w.sessionId, promptNumber)
    .first<{ id: number }>())!.id;
  expect(
    await indexRecords(e, w.ids.teamId, { observations: [obs], summaries: [sum], prompts: [prompt] }),
  ).toMatchObject({ indexed: 3, failed: 0 });
  return { obs, sum, prompt };
}

/** The local_vectors rows of the records, as `kind:id.part`. */
async function localRows(r: Remembered): Promise<string[]> {
  const rows = await env.DB.prepare(
    "SELECT kind, record_id, part FROM local_vectors WHERE (kind = 'observation' AND record_id = ?1) OR (kind = 'summary' AND record_id = ?2) OR (kind = 'prompt' AND record_id = ?3) ORDER BY kind, part",
  )
    .bind(r.obs, r.sum, r.prompt)
    .all<{ kind: string; record_id: number; part: number }>();
  return rows.results.map((x) => `${x.kind}:${x.record_id}.${x.part}`);
}

const allLocal = (r: Remembered) => [
  `observation:${r.obs}.0`,
  `observation:${r.obs}.1`,
  `observation:${r.obs}.2`,
  `prompt:${r.prompt}.0`,
  `summary:${r.sum}.0`,
];
const allVectorize = (r: Remembered, prefix = '') =>
  [
    `${prefix}${r.obs}`,
    `${prefix}${r.obs}.f1`,
    `${prefix}${r.obs}.f2`,
    `${prefix}p${r.prompt}`,
    `${prefix}s${r.sum}`,
  ].sort();

const sessionKeyOf = async (w: SeedWorld) =>
  (await env.DB.prepare('SELECT session_key FROM sessions WHERE id = ?')
    .bind(w.sessionId)
    .first<{ session_key: string }>())!.session_key;

describe('forgetting removes every vector of every kind and part', { timeout: 60_000 }, () => {
  it('leaves no local vector row of a forgotten observation, its facts, its summary or its prompt', async () => {
    const w = await seedWorld();
    const r = await remembered(w, env);
    expect(await localRows(r)).toEqual(allLocal(r));
    for (const body of [
      { kind: 'observation', id: r.obs },
      { kind: 'summary', id: r.sum },
      { kind: 'prompt', id: r.prompt },
    ]) {
      expect((await call('/api/forget', { token: w.id.token, json: body })).status).toBe(200);
    }
    expect(await localRows(r)).toEqual([]);
  });

  it('leaves nothing of a forgotten record in the Vectorize index, and nothing of its neighbours is touched', async () => {
    const fake = new FakeVectorize();
    const prod = productionVectorEnv(fake);
    const w = await seedWorld();
    const r = await remembered(w, prod, Date.now(), 1);
    const kept = await remembered(w, prod, Date.now(), 2);
    expect(fake.idsOf(w.ids.teamId)).toEqual([...allVectorize(r), ...allVectorize(kept)].sort());
    await forgetRecord(prod, authOf(w), 'observation', r.obs, Date.now());
    await forgetRecord(prod, authOf(w), 'summary', r.sum, Date.now());
    await forgetRecord(prod, authOf(w), 'prompt', r.prompt, Date.now());
    expect(fake.idsOf(w.ids.teamId)).toEqual(allVectorize(kept));
  });

  it('leaves nothing of a forgotten session, locally or in Vectorize', async () => {
    const fake = new FakeVectorize();
    const prod = productionVectorEnv(fake);
    const w = await seedWorld();
    const r = await remembered(w, prod);
    await indexRecords(env, w.ids.teamId, { observations: [r.obs], summaries: [r.sum], prompts: [r.prompt] });
    expect(await localRows(r)).toEqual(allLocal(r));
    await forgetSession(prod, authOf(w), await sessionKeyOf(w), Date.now());
    expect(fake.idsOf(w.ids.teamId)).toEqual([]);
    expect(await localRows(r)).toEqual([]);
  });

  it("leaves nothing of a purged project (forget project, a removed user's private projects), locally or in Vectorize", async () => {
    const fake = new FakeVectorize();
    const prod = productionVectorEnv(fake);
    const w = await seedWorld();
    const r = await remembered(w, prod);
    await indexRecords(env, w.ids.teamId, { observations: [r.obs], summaries: [r.sum], prompts: [r.prompt] });
    const started = await purgeProject(
      prod,
      w.ids.teamId,
      { userId: w.ids.userId, handle: w.id.user },
      w.projectId,
      w.key,
      Date.now(),
    );
    expect(started.job?.kind).toBe('forget-project');
    // The job's steps with this test's Vectorize (the lane's object has the test environment's own).
    await runKindInline(
      prod,
      forgetProjectJob,
      w.ids.teamId,
      { projectId: w.projectId, key: w.key, total: 3 },
      w.ids.userId,
    );
    expect(fake.idsOf(w.ids.teamId)).toEqual([]);
    expect(await localRows(r)).toEqual([]);
  });
});

describe('retention removes every vector of every kind and part', { timeout: 60_000 }, () => {
  it("sweeps the old records' vectors from local_vectors and Vectorize and keeps the new ones", async () => {
    const fake = new FakeVectorize();
    const prod = productionVectorEnv(fake);
    const w = await seedWorld();
    const now = Date.now();
    const old = await remembered(w, prod, now - 40 * DAY, 1);
    const young = await remembered(w, prod, now - 2 * DAY, 2);
    for (const r of [old, young])
      await indexRecords(env, w.ids.teamId, { observations: [r.obs], summaries: [r.sum], prompts: [r.prompt] });
    expect(
      (await call('/api/admin/settings', { token: w.id.token, method: 'PATCH', json: { retention_days: 30 } })).status,
    ).toBe(200);
    // The sweep job's steps with this test's Vectorize (the lane's object has the test environment's own).
    expect(
      (await runKindInline(prod, retentionSweepJob, w.ids.teamId, { before: now - 30 * DAY, days: 30 })).result,
    ).toMatchObject({ observations: 1, summaries: 1, prompts: 1 });
    expect(fake.idsOf(w.ids.teamId)).toEqual(allVectorize(young));
    expect(await localRows(old)).toEqual([]);
    expect(await localRows(young)).toEqual(allLocal(young));
  });
});

describe("moving a team removes the old database's vectors of every kind and part", { timeout: 60_000 }, () => {
  it("deletes the old ids and writes every kind again under the new database's prefix", async () => {
    const fake = new FakeVectorize();
    const prod = productionVectorEnv(fake);
    const w = await seedWorld();
    const r = await remembered(w, prod);
    expect(fake.idsOf(w.ids.teamId)).toEqual(allVectorize(r));
    await moveNow(prod, w.ids.teamId, 'DB_1', true);
    const ids = fake.idsOf(w.ids.teamId);
    expect(ids.every((id) => id.startsWith('DB_1:'))).toBe(true);
    const moved = await env.DB_1.prepare(
      'SELECT (SELECT id FROM observations WHERE team_id = ?1) AS obs, (SELECT id FROM summaries WHERE team_id = ?1) AS sum, (SELECT id FROM prompts WHERE team_id = ?1) AS prompt',
    )
      .bind(w.ids.teamId)
      .first<Remembered>();
    expect(ids).toEqual(allVectorize(moved!, 'DB_1:'));
    await moveNow(prod, w.ids.teamId, 'DB', true);
    expect(fake.idsOf(w.ids.teamId).some((id) => id.startsWith('DB_1:'))).toBe(false);
  });
});
