// Forgetting a record that consolidation made stand for others takes them along, by every forget: a session whose
// record stands for a near-duplicate from another session, that record by id, and the whole project. Read from
// storage: every D1 table and FTS index, local vectors and an in-memory Vectorize behind the production adapters,
// and both sessions' Durable Objects (the source's session keeps the observer conversation that wrote its text).
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../../../src/auth/types';
import { consolidateJob } from '../../../src/consolidation/job';
import { forgetRecord, forgetSession, purgeProject } from '../../../src/forget/service';
import { forgetProjectJob } from '../../../src/forget/project-job';
import { indexRecords } from '../../../src/vectors/index-records';
import { fresh, newIdentity, type TestIdentity } from '../support/http';
import { FakeVectorize, productionVectorEnv } from '../support/fake-vectorize';
import { runKindInline } from '../support/jobs';
import { idsOf, type Ids } from '../support/seed';
import { d1Holding, expectForgotten, objectHolding, secretWord } from '../support/storage-scan';
import { initEvent, script, send, settled, toolEvent, waitFor } from '../pipeline/support';

interface World {
  owner: TestIdentity;
  ids: Ids;
  project: string;
}

interface Lived {
  sid: string;
  word: string;
  obs: number;
}

const world = async (): Promise<World> => {
  const owner = await newIdentity({ role: 'owner' });
  return { owner, ids: await idsOf(owner), project: `github.com/acme/${fresh('repo')}` };
};

const authOf = (w: World): AuthContext => ({
  tokenId: 0,
  teamId: w.ids.teamId,
  teamSlug: w.owner.team,
  userId: w.ids.userId,
  handle: w.owner.user,
  role: 'owner',
  deviceId: null,
  deviceName: null,
  scopes: ['read', 'ingest'],
});

/** One session through the pipeline whose observer writes a near-duplicate of the others, carrying its own word. */
async function lived(w: World, at: number): Promise<Lived> {
  const sid = fresh('s');
  const word = secretWord();
  const scenario = fresh('merged');
  await script(scenario, [
    {
      text:
        '<observation><type>bugfix</type><title>Token refresh fails when the clock skews five minutes</title>' +
        '<narrative>The expiry check in verifyToken compares exp against Date.now() without any leeway, so a laptop whose clock runs ' +
        `five minutes fast gets 401 on every refresh until the clock is corrected by hand. Seen as ${word}.</narrative>` +
        '<facts><fact>verifyToken has no clock leeway</fact></facts><concepts><concept>gotcha</concept></concepts>' +
        '<files_modified><file>src/auth/verify.ts</file></files_modified></observation>',
    },
  ]);
  const where = { project: w.project, occurred_at: at };
  await send(w.owner.token, 'init', { ...initEvent(sid, 'why does refresh fail?'), ...where });
  await send(w.owner.token, 'observations', {
    ...toolEvent(sid, `SCENARIO:${scenario} grep -rn leeway src/auth # ${word}`),
    ...where,
    occurred_at: at + 1,
  });
  await waitFor(w.owner.token, sid, (s) => settled(s) && s.observations_stored >= 1);
  const row = await env.DB.prepare(
    'SELECT o.id FROM observations o JOIN sessions s ON s.id = o.session_id WHERE s.session_key = ?',
  )
    .bind(sid)
    .first<{ id: number }>();
  return { sid, word, obs: row!.id };
}

/** Two sessions' near-duplicates, embedded into `fake`, merged by consolidation: the older into the newer. */
async function merged(w: World, fake: FakeVectorize): Promise<{ source: Lived; standing: Lived; projectId: number }> {
  const t0 = Date.now() - 60_000;
  const source = await lived(w, t0);
  const standing = await lived(w, t0 + 10_000);
  const prod = productionVectorEnv(fake);
  expect(await indexRecords(prod, w.ids.teamId, { observations: [source.obs, standing.obs] })).toMatchObject({
    failed: 0,
  });
  expect(await indexRecords(env, w.ids.teamId, { observations: [source.obs, standing.obs] })).toMatchObject({
    failed: 0,
  });
  const projectId = (await env.DB.prepare('SELECT project_id AS id FROM observations WHERE id = ?')
    .bind(source.obs)
    .first<{ id: number }>())!.id;
  await runKindInline(env, consolidateJob, w.ids.teamId, { projectId }, w.ids.userId);
  const row = await env.DB.prepare('SELECT merged_into FROM observations WHERE id = ?')
    .bind(source.obs)
    .first<{ merged_into: number | null }>();
  expect(row?.merged_into).toBe(standing.obs);
  // Before the forget, the source's text is in its row, FTS, vectors and its session's observer conversation.
  expect(await d1Holding(source.word)).toEqual(
    expect.arrayContaining(['observations.narrative', 'observations_fts MATCH']),
  );
  expect(await objectHolding(w.ids.teamId, source.sid, source.word)).toEqual(['meta.v']);
  expect(vectorIds(fake, w.ids.teamId, source.obs).length).toBeGreaterThan(0);
  return { source, standing, projectId };
}

const vectorIds = (fake: FakeVectorize, teamId: number, obs: number) =>
  fake.idsOf(teamId).filter((id) => id === `${obs}` || id.startsWith(`${obs}.`));
const localVectors = (obs: number) =>
  env.DB.prepare("SELECT count(*) AS n FROM local_vectors WHERE kind = 'observation' AND record_id = ?")
    .bind(obs)
    .first<{ n: number }>()
    .then((r) => r?.n);

async function expectGone(w: World, fake: FakeVectorize, ...lives: Lived[]): Promise<void> {
  for (const l of lives) {
    await expectForgotten(l.word);
    expect(await objectHolding(w.ids.teamId, l.sid, l.word)).toEqual([]);
    expect(vectorIds(fake, w.ids.teamId, l.obs)).toEqual([]);
    expect(await localVectors(l.obs)).toBe(0);
  }
  const events = await env.DB.prepare(
    'SELECT count(*) AS n FROM observation_events WHERE observation_id IN (?, ?) OR by_observation_id IN (?, ?)',
  )
    .bind(lives[0]!.obs, lives.at(-1)!.obs, lives[0]!.obs, lives.at(-1)!.obs)
    .first<{ n: number }>();
  expect(events?.n).toBe(0);
}

describe('forgetting what consolidation merged', { timeout: 90_000 }, () => {
  it('forgets a session with the near-duplicates of other sessions merged into its records: rows, FTS, vectors and both objects', async () => {
    const w = await world();
    const fake = new FakeVectorize();
    const { source, standing } = await merged(w, fake);

    const out = await forgetSession(productionVectorEnv(fake), authOf(w), standing.sid, Date.now());
    expect(out.counts).toMatchObject({ observations: 2, sessions: 1 });
    await expectGone(w, fake, source, standing);
    // The source's session is still there (its prompt too): only the merged record went.
    const left = await env.DB.prepare('SELECT count(*) AS n FROM sessions WHERE session_key = ?')
      .bind(source.sid)
      .first<{ n: number }>();
    expect(left?.n).toBe(1);
  });

  it("forgets the record that stands for others by id, and their text leaves the source session's observer conversation", async () => {
    const w = await world();
    const fake = new FakeVectorize();
    const { source, standing } = await merged(w, fake);

    const out = await forgetRecord(productionVectorEnv(fake), authOf(w), 'observation', standing.obs, Date.now());
    expect(out.counts.observations).toBe(2);
    await expectGone(w, fake, source, standing);
  });

  it('forgets a project whose records were merged and corrected (their history rows first), leaving nothing of either', async () => {
    const w = await world();
    const fake = new FakeVectorize();
    const { source, standing, projectId } = await merged(w, fake);
    const prod = productionVectorEnv(fake);

    const started = await purgeProject(
      prod,
      w.ids.teamId,
      { userId: w.ids.userId, handle: w.owner.user },
      projectId,
      w.project,
      Date.now(),
    );
    expect(started.job?.kind).toBe('forget-project');
    const done = await runKindInline(
      prod,
      forgetProjectJob,
      w.ids.teamId,
      { projectId, key: w.project, total: 4 },
      w.ids.userId,
    );
    expect(done.result).toMatchObject({ counts: { observations: 2 } });
    await expectGone(w, fake, source, standing);
  });
});
