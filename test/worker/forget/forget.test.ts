// Forget that forgets: after forgetting a record, a session or a project, no D1 table, FTS index, vector row
// or session Durable Object holds its text. Checked by scanning storage, not through the API.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, fresh, newIdentity, type TestIdentity } from '../support/http';
import { runJob, runOpenJobs } from '../support/jobs';
import { idsOf } from '../support/seed';
import { base, holdLease, initEvent, script, send, settled, toolEvent, waitFor } from '../pipeline/support';
import { d1Holding, expectForgotten, objectHolding, secretWord } from '../support/storage-scan';

interface Lived {
  id: TestIdentity;
  teamId: number;
  sid: string;
  word: string;
  project: string;
}

/** A real session through the pipeline whose prompt, observation (title, facts, files) and summary carry `word`. */
async function liveSession(id?: TestIdentity, project = `github.com/acme/${fresh('p')}`): Promise<Lived> {
  const who = id ?? (await newIdentity());
  const { teamId } = await idsOf(who);
  const sid = fresh('s');
  const word = secretWord();
  const scenario = fresh('forget');
  await script(scenario, [
    {
      text:
        `<observation><type>discovery</type><title>The ${word} key lives in config</title><narrative>Found ${word} in settings.</narrative>` +
        `<facts><fact>${word} is the staging key</fact></facts><concepts><concept>how-it-works</concept></concepts>` +
        `<files_read><file>src/${word}.ts</file></files_read></observation>`,
    },
    {
      text: `<summary><request>Find ${word}</request><investigated>config</investigated><learned>${word} is set</learned><completed>done</completed><next_steps>none</next_steps></summary>`,
    },
  ]);
  const at = Date.now() - 10_000;
  const ev = (extra: Record<string, unknown>) => ({ ...base(sid, project), ...extra });
  await send(who.token, 'init', { ...initEvent(sid, `where is ${word} set?`), project, occurred_at: at });
  await send(who.token, 'observations', {
    ...toolEvent(sid, `SCENARIO:${scenario} grep -r ${word}`),
    project,
    occurred_at: at + 1_000,
  });
  await send(
    who.token,
    'summarize',
    ev({
      event_id: fresh('ev'),
      last_assistant_message: `SCENARIO:${scenario} ${word} is in config`,
      occurred_at: at + 2_000,
    }),
  );
  await waitFor(who.token, sid, (s) => settled(s) && s.turns >= 2);
  return { id: who, teamId, sid, word, project };
}

async function recordIds(sid: string) {
  const q = (sql: string) => env.DB.prepare(sql).bind(sid).first<{ id: number }>();
  const obs = await q('SELECT o.id FROM observations o JOIN sessions s ON s.id = o.session_id WHERE s.session_key = ?');
  const sum = await q('SELECT x.id FROM summaries x JOIN sessions s ON s.id = x.session_id WHERE s.session_key = ?');
  const pr = await q('SELECT x.id FROM prompts x JOIN sessions s ON s.id = x.session_id WHERE s.session_key = ?');
  return { obs: obs!.id, sum: sum!.id, prompt: pr!.id };
}

async function embedNow(teamId: number, ids: number[]): Promise<void> {
  const { indexObservations } = await import('../../../src/vectors/index-records');
  await indexObservations(env, teamId, ids);
}

const forget = (token: string, body: Record<string, unknown>) => call('/api/forget', { token, json: body });

describe('forget', { timeout: 60_000 }, () => {
  it('leaves no trace of the text in any D1 table or FTS index once the observation, summary and prompt are forgotten', async () => {
    const s = await liveSession();
    const ids = await recordIds(s.sid);
    await embedNow(s.teamId, [ids.obs]);
    const before = await d1Holding(s.word);
    expect(before).toEqual(
      expect.arrayContaining([
        'observations.title',
        'observation_files.path',
        'summaries.learned',
        'prompts.text',
        'observations_fts MATCH',
        'summaries_fts MATCH',
        'prompts_fts MATCH',
        'observations_fts_data.block',
        'summaries_fts_data.block',
        'prompts_fts_data.block',
      ]),
    );
    // Its main text and its one fact.
    expect(
      await env.DB.prepare("SELECT COUNT(*) AS n FROM local_vectors WHERE record_id = ? AND kind = 'observation'")
        .bind(ids.obs)
        .first<{ n: number }>(),
    ).toEqual({ n: 2 });

    for (const body of [
      { kind: 'observation', id: ids.obs },
      { kind: 'summary', id: ids.sum },
      { kind: 'prompt', id: ids.prompt },
    ]) {
      const res = await forget(s.id.token, body);
      expect(res.status, JSON.stringify(body)).toBe(200);
    }
    await expectForgotten(s.word);
    expect(
      await env.DB.prepare("SELECT COUNT(*) AS n FROM local_vectors WHERE record_id = ? AND kind = 'observation'")
        .bind(ids.obs)
        .first<{ n: number }>(),
    ).toEqual({ n: 0 });
    const audit = await env.DB.prepare(
      "SELECT actor_user_id, target, detail FROM audit_log WHERE team_id = ? AND action = 'forget' ORDER BY id",
    )
      .bind(s.teamId)
      .all<{ target: string }>();
    expect(audit.results.map((r) => r.target)).toEqual([
      `observation:${ids.obs}`,
      `summary:${ids.sum}`,
      `prompt:${ids.prompt}`,
    ]);
    // A second time: nothing there any more.
    expect((await forget(s.id.token, { kind: 'observation', id: ids.obs })).status).toBe(404);
  });

  it('forgets a whole session: its rows in D1, its vectors and everything its Durable Object held', async () => {
    const s = await liveSession();
    const ids = await recordIds(s.sid);
    await embedNow(s.teamId, [ids.obs]);
    // Something still buffered in the object: a tool call the observer has not seen yet.
    await holdLease(s.teamId, s.sid);
    await send(s.id.token, 'observations', { ...toolEvent(s.sid, `cat ${s.word}.env`), project: s.project });
    expect(await objectHolding(s.teamId, s.sid, s.word)).not.toEqual([]);

    const res = await forget(s.id.token, { kind: 'session', session_id: s.sid });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ counts: { observations: 1, summaries: 1, prompts: 1, sessions: 1 } });
    await expectForgotten(s.word);
    expect(await objectHolding(s.teamId, s.sid, s.word)).toEqual([]);
    expect(
      await env.DB.prepare("SELECT COUNT(*) AS n FROM local_vectors WHERE record_id = ? AND kind = 'observation'")
        .bind(ids.obs)
        .first<{ n: number }>(),
    ).toEqual({ n: 0 });
  });

  it('forgets a project only when the admin repeats the count it was told, and then deletes all of it', async () => {
    const admin = await newIdentity();
    const project = `github.com/acme/${fresh('p')}`;
    const a = await liveSession(admin, project);
    const b = await liveSession(admin, project);
    const first = await forget(admin.token, { kind: 'project', project });
    expect(first.status).toBe(409);
    const told = (await first.json()) as { error: { code: string; message: string } };
    expect(told.error.code).toBe('confirm_required');
    expect(told.error.message).toContain('"confirm": 6');
    expect((await forget(admin.token, { kind: 'project', project, confirm: 5 })).status).toBe(409);
    expect(await d1Holding(a.word)).not.toEqual([]);

    const member = await newIdentity({ team: admin.team });
    expect((await forget(member.token, { kind: 'project', project, confirm: 6 })).status).toBe(403);

    const done = await forget(admin.token, { kind: 'project', project, confirm: 6 });
    // Answered at once with the job that deletes it; the person who started it follows it at /api/jobs/:id.
    expect(done.status).toBe(202);
    const answer = (await done.json()) as {
      counts: unknown;
      job: { id: string; kind: string; progress: { total: number } };
    };
    expect(answer).toMatchObject({
      counts: { observations: 2, summaries: 2, prompts: 2, sessions: 2 },
      job: { kind: 'forget-project', progress: { total: 6 } },
    });
    const job = await runJob(a.teamId, answer.job.id);
    expect(job).toMatchObject({
      status: 'done',
      progress: { done: 6, total: 6 },
      result: { counts: { observations: 2, summaries: 2, prompts: 2, sessions: 2 } },
    });
    const seen = await call(`/api/jobs/${answer.job.id}`, { token: admin.token });
    expect(((await seen.json()) as { job: { status: string } }).job.status).toBe('done');
    for (const s of [a, b]) {
      await expectForgotten(s.word);
      expect(await objectHolding(s.teamId, s.sid, s.word)).toEqual([]);
    }
    expect(
      await env.DB.prepare('SELECT COUNT(*) AS n FROM projects WHERE team_id = ? AND key = ?')
        .bind(a.teamId, project)
        .first<{ n: number }>(),
    ).toEqual({ n: 0 });
  });

  it("refuses a member forgetting a teammate's summary, and answers other teams' ids like missing ones", async () => {
    const s = await liveSession();
    const ids = await recordIds(s.sid);
    const member = await newIdentity({ team: s.id.team });
    const refused = await forget(member.token, { kind: 'summary', id: ids.sum });
    expect(refused.status).toBe(403);
    const stranger = await newIdentity();
    const foreign = await forget(stranger.token, { kind: 'summary', id: ids.sum });
    const missing = await forget(stranger.token, { kind: 'summary', id: 99_999_999 });
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    expect((await foreign.text()).replace(String(ids.sum), 'N')).toBe((await missing.text()).replace('99999999', 'N'));
    expect(await d1Holding(s.word)).toContain('summaries.learned');
  });

  it('offers to delete the private projects of a user being removed, and deletes them when asked', async () => {
    const owner = await newIdentity();
    const leaver = await newIdentity({ team: owner.team });
    const kept = await liveSession(leaver, `local/${fresh('scratch')}`);
    const gone = await liveSession(await newIdentity({ team: owner.team }), `local/${fresh('notes')}`);
    const offer = await call(`/api/admin/users/${leaver.user}`, { token: owner.token, method: 'DELETE' });
    expect(offer.status).toBe(200);
    const offered = (await offer.json()) as { private_projects: string[]; private_projects_deleted: string[] };
    expect(offered.private_projects).toHaveLength(1);
    expect(offered.private_projects_deleted).toEqual([]);
    expect(await d1Holding(kept.word)).not.toEqual([]);

    const other = await env.DB.prepare(
      'SELECT u.handle FROM users u JOIN sessions s ON s.user_id = u.id WHERE s.session_key = ?',
    )
      .bind(gone.sid)
      .first<{ handle: string }>();
    const res = await call(`/api/admin/users/${other!.handle}?delete_private_projects=1`, {
      token: owner.token,
      method: 'DELETE',
    });
    expect(((await res.json()) as { private_projects_deleted: string[] }).private_projects_deleted).toHaveLength(1);
    await runOpenJobs(gone.teamId, 'forget-project');
    await expectForgotten(gone.word);
    expect(await objectHolding(gone.teamId, gone.sid, gone.word)).toEqual([]);
  });

  it('refuses malformed requests with a stable code', async () => {
    const who = await newIdentity();
    const bad = await forget(who.token, { kind: 'observation', id: 'twelve' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_body');
  });
});
