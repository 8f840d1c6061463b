// Team retention: with `retention_days` set, the daily sweep deletes older observations, summaries and
// prompts from every table and index; newer ones, and teams without the setting, keep everything. The team's daily
// job starts a `retention-sweep` job for it, which deletes in steps within the step budget.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { storePrompt } from '../../../src/store/sessions';
import { startTeamRetention } from '../../../src/retention/sweep';
import { indexObservations } from '../../../src/vectors/index-records';
import { call, fresh } from '../support/http';
import { CuttingVectorize, FakeVectorize, productionVectorEnv } from '../support/fake-vectorize';
import { lane, runJob, runOpenJobs, settleFtsUpkeep } from '../support/jobs';
import { configOf } from '../../../src/config';
import { metered } from '../../../src/db/meter';
import { stepContext } from '../../../src/jobs/step';
import { retentionSweepJob } from '../../../src/retention/sweep-job';
import { seedWorld, type SeedWorld } from '../support/seed';
import { runTeamDay } from '../support/daily';

const DAY = 86_400_000;
// Ends in a digit: FTS5's porter stemmer rewrites endings like -s or -ed, and the segment check below looks for
// the word's tail as stored.
const word = () => `rtn${Math.random().toString(36).slice(2, 10)}7`;

async function holding(w: string): Promise<string[]> {
  const hits: string[] = [];
  const checks: [string, string][] = [
    ['observations', 'SELECT COUNT(*) AS n FROM observations WHERE title LIKE ?1'],
    ['observation_files', 'SELECT COUNT(*) AS n FROM observation_files WHERE path LIKE ?1'],
    ['summaries', 'SELECT COUNT(*) AS n FROM summaries WHERE learned LIKE ?1'],
    ['prompts', 'SELECT COUNT(*) AS n FROM prompts WHERE text LIKE ?1'],
    ['observations_fts', `SELECT COUNT(*) AS n FROM observations_fts WHERE observations_fts MATCH '"${w}"'`],
    ['summaries_fts', `SELECT COUNT(*) AS n FROM summaries_fts WHERE summaries_fts MATCH '"${w}"'`],
    ['prompts_fts', `SELECT COUNT(*) AS n FROM prompts_fts WHERE prompts_fts MATCH '"${w}"'`],
    [
      'fts segments',
      'SELECT (SELECT COUNT(*) FROM observations_fts_data WHERE instr(CAST(block AS TEXT), ?2) > 0) + (SELECT COUNT(*) FROM summaries_fts_data WHERE instr(CAST(block AS TEXT), ?2) > 0) + (SELECT COUNT(*) FROM prompts_fts_data WHERE instr(CAST(block AS TEXT), ?2) > 0) AS n',
    ],
  ];
  for (const [name, sql] of checks) {
    const stmt = env.DB.prepare(sql);
    // Segment blobs store terms prefix-compressed: the word's random tail is what stays contiguous.
    const bound = sql.includes('?2')
      ? stmt.bind(`%${w}%`, w.slice(-6))
      : sql.includes('?1')
        ? stmt.bind(`%${w}%`)
        : stmt;
    if (((await bound.first<{ n: number }>())?.n ?? 0) > 0) hits.push(name);
  }
  return hits;
}

async function seedAged(w: SeedWorld, text: string, at: number, promptNumber: number) {
  const obs = await w.add({ title: `Note ${text}`, filesRead: [`src/${text}.ts`], createdAt: at });
  await w.summary({ learned: `learned ${text}`, createdAt: at });
  await storePrompt(env.DB, {
    teamId: w.ids.teamId,
    projectId: w.projectId,
    sessionDbId: w.sessionId,
    promptNumber,
    text: `ask ${text}`,
    authorUserId: w.ids.userId,
    createdAt: at,
  });
  await indexObservations(env, w.ids.teamId, [obs]);
  return obs;
}

describe('team retention sweep', () => {
  it('deletes what is older than retention_days from every table, index and vector, and keeps the rest', async () => {
    const w = await seedWorld();
    const now = Date.now();
    const [oldWord, newWord] = [word(), word()];
    const oldObs = await seedAged(w, oldWord, now - 40 * DAY, 1);
    await seedAged(w, newWord, now - 2 * DAY, 2);
    const set = await call('/api/admin/settings', { token: w.id.token, method: 'PATCH', json: { retention_days: 30 } });
    expect(set.status).toBe(200);

    await startTeamRetention(env, w.ids.teamId, JSON.stringify({ retention_days: 30 }), now);
    const [sweep] = await runOpenJobs(w.ids.teamId, 'retention-sweep');
    // The index segments: within the upkeep cycle the sweep asked for.
    const upkeep = await settleFtsUpkeep();
    expect(sweep!.result).toMatchObject({ observations: 1, summaries: 1, prompts: 1 });
    // The cycles' results say why, should a segment still hold the word (capped, or none ran after the sweep).
    expect(await holding(oldWord), JSON.stringify(upkeep)).toEqual([]);
    expect(await holding(newWord)).toEqual([
      'observations',
      'observation_files',
      'summaries',
      'prompts',
      'observations_fts',
      'summaries_fts',
      'prompts_fts',
      'fts segments',
    ]);
    expect(
      await env.DB.prepare("SELECT COUNT(*) AS n FROM local_vectors WHERE record_id = ? AND kind = 'observation'")
        .bind(oldObs)
        .first<{ n: number }>(),
    ).toEqual({ n: 0 });
    const audit = await env.DB.prepare("SELECT detail FROM audit_log WHERE team_id = ? AND action = 'retention.sweep'")
      .bind(w.ids.teamId)
      .first<{ detail: string }>();
    expect(JSON.parse(audit!.detail)).toMatchObject({ days: 30, observations: 1, summaries: 1, prompts: 1 });
  });

  it('keeps everything of a team that has not set retention_days', async () => {
    const w = await seedWorld();
    const old = word();
    await seedAged(w, old, Date.now() - 4_000 * DAY, 1);
    expect(await startTeamRetention(env, w.ids.teamId, '{}', Date.now())).toBeNull();
    expect(await lane(w.ids.teamId).list(10, 'retention-sweep')).toEqual([]);
    expect(await holding(old)).toContain('observations');
  });

  it('refuses a retention_days that is not a whole number of days', async () => {
    const w = await seedWorld();
    const res = await call('/api/admin/settings', {
      token: w.id.token,
      method: 'PATCH',
      json: { retention_days: 0.5 },
    });
    expect(res.status).toBe(400);
  });
  it('sweeps a long history by a job per team that the daily part only starts, each step within the budget', async () => {
    const w = await seedWorld();
    const now = Date.now();
    const keep = word();
    await seedAged(w, keep, now - 2 * DAY, 1);
    // 1,200 old observations (three chunks of 500), written in one statement.
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1200)
       INSERT INTO observations (team_id, project_id, session_id, type, title, narrative, created_at, stored_at, content_hash, author_user_id)
       SELECT ?1, ?2, ?3, 'discovery', 'old note ' || i, 'old', ?4 - i, ?4, 'old-' || i, ?5 FROM n`,
    )
      .bind(w.ids.teamId, w.projectId, w.sessionId, now - 400 * DAY, w.ids.userId)
      .run();
    expect(
      (await call('/api/admin/settings', { token: w.id.token, method: 'PATCH', json: { retention_days: 30 } })).status,
    ).toBe(200);

    const day = await runTeamDay(w.ids.teamId, now);
    // The team's daily job only starts the sweep: a few statements, whatever the history.
    expect(day.stats.statements.max).toBeLessThan(10);
    const started = (day.result as { retention: string | null }).retention;
    expect(started).not.toBeNull();
    const job = await runJob(w.ids.teamId, started!);
    expect(job.status).toBe('done');
    expect(job.result).toMatchObject({ observations: 1200, days: 30 });
    expect(job.stats.statements.max).toBeLessThanOrEqual(configOf(env).jobStep.statements);
    const left = await env.DB.prepare('SELECT COUNT(*) AS n FROM observations WHERE team_id = ?')
      .bind(w.ids.teamId)
      .first<{ n: number }>();
    expect(left).toEqual({ n: 1 });
    expect(await holding(keep)).toContain('observations');
  });

  it('repeats nothing when a sweep step runs again from the same cursor, as after a restart', async () => {
    const w = await seedWorld();
    const now = Date.now();
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 700)
       INSERT INTO observations (team_id, project_id, session_id, type, title, narrative, created_at, stored_at, content_hash, author_user_id)
       SELECT ?1, ?2, ?3, 'discovery', 'old note ' || i, 'old', ?4 - i, ?4, 'old-' || i, ?5 FROM n`,
    )
      .bind(w.ids.teamId, w.projectId, w.sessionId, now - 400 * DAY, w.ids.userId)
      .run();
    // A small budget, so the sweep takes several steps: one chunk each.
    const budget = { ...configOf(env).jobStep, statements: 30 };
    const p = retentionSweepJob.params.parse({ before: now - 30 * DAY, days: 30 });
    let cursor = retentionSweepJob.init(p, { teamId: w.ids.teamId, now }).cursor;
    const step = () =>
      metered(env, 'job retention-sweep', () =>
        retentionSweepJob.step(
          stepContext({ env, jobId: 'inline', teamId: w.ids.teamId, actorUserId: null, budget }),
          p,
          cursor,
        ),
      );
    let steps = 0;
    let result: unknown = null;
    for (;;) {
      await step();
      const again = await step();
      steps++;
      cursor = again.cursor;
      result = again.result;
      if (again.done) break;
      expect(steps).toBeLessThan(20);
    }
    expect(steps).toBeGreaterThanOrEqual(2);
    expect(
      await env.DB.prepare('SELECT COUNT(*) AS n FROM observations WHERE team_id = ?')
        .bind(w.ids.teamId)
        .first<{ n: number }>(),
    ).toEqual({ n: 0 });
    // The job reports what the first run of each step deleted, and the audit row is written once.
    expect(result).toMatchObject({ observations: 700 });
    expect(await sweepAudits(w.ids.teamId)).toEqual([{ observations: 700 }]);
  });

  it('counts every record a step deleted before it was cut off, when the step runs again from its cursor', async () => {
    const w = await seedWorld();
    const now = Date.now();
    await oldNotes(w, 1_700, now);
    const p = retentionSweepJob.params.parse({ before: now - 30 * DAY, days: 30 });
    const jobId = fresh('job');
    const first = retentionSweepJob.init(p, { teamId: w.ids.teamId, now }).cursor;
    // Paid's step: two chunks of 500 fit one step (Free's takes one a step, and a cut between steps cuts nothing).
    const paid = { ...env, CAIRN_PLAN: 'paid' };
    const step = (index: FakeVectorize, cursor: typeof first) =>
      metered(paid, 'job retention-sweep', () =>
        retentionSweepJob.step(
          stepContext({
            env: productionVectorEnv(index),
            jobId,
            teamId: w.ids.teamId,
            actorUserId: null,
            budget: configOf(paid).jobStep,
          }),
          p,
          cursor,
        ),
      );
    // Five vector calls a chunk of 500: the sixth is the second chunk's, after its D1 batch landed.
    await expect(step(new CuttingVectorize(6), first)).rejects.toThrow('cut off mid-step');
    expect(await observationsOf(w.ids.teamId)).toBe(700);

    let out = await step(new FakeVectorize(), first);
    for (let i = 0; !out.done && i < 20; i++) out = await step(new FakeVectorize(), out.cursor);
    expect(out.done).toBe(true);
    expect(out.result).toMatchObject({ observations: 1_700 });
    expect(await observationsOf(w.ids.teamId)).toBe(0);
    expect(await sweepAudits(w.ids.teamId)).toEqual([{ observations: 1_700 }]);
  });
});

const observationsOf = async (teamId: number) =>
  (await env.DB.prepare('SELECT COUNT(*) AS n FROM observations WHERE team_id = ?')
    .bind(teamId)
    .first<{ n: number }>())!.n;

async function sweepAudits(teamId: number): Promise<{ observations: number }[]> {
  const rows = await env.DB.prepare(
    "SELECT detail FROM audit_log WHERE team_id = ? AND action = 'retention.sweep' ORDER BY id",
  )
    .bind(teamId)
    .all<{ detail: string }>();
  return rows.results.map((r) => ({ observations: (JSON.parse(r.detail) as { observations: number }).observations }));
}

/** `n` observations 400 days old, written in one statement. */
async function oldNotes(w: SeedWorld, n: number, now: number): Promise<void> {
  await env.DB.prepare(
    `WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?6)
     INSERT INTO observations (team_id, project_id, session_id, type, title, narrative, created_at, stored_at, content_hash, author_user_id)
     SELECT ?1, ?2, ?3, 'discovery', 'old note ' || i, 'old', ?4 - i, ?4, 'old-' || i, ?5 FROM k`,
  )
    .bind(w.ids.teamId, w.projectId, w.sessionId, now - 400 * DAY, w.ids.userId, n)
    .run();
}
