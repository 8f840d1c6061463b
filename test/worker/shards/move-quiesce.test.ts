// A team move is quiesced by the team's own objects, never by its clients' clocks: events buffered in a session
// object with a forged 20-minute-old clock hold the move back (or, forced, are re-pointed at the team's new rows),
// writes during the move are refused with 503 team_moving and a Retry-After, and D1 itself refuses any row whose
// project or session belongs to another team (migration 0015), so nothing is ever filed under another team's rows.
import { createExecutionContext, runDurableObjectAlarm, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import app from '../../../src/app';
import { startJob } from '../../../src/jobs/start';
import { sessionStub } from '../../../src/session/session-do';
import { teamStub } from '../../../src/slots/team-do';
import { moveJob } from '../../../src/transfer/move-job';
import { ADMIN_SECRET, BASE, call, fresh, type TestIdentity } from '../support/http';
import { finishJob, jobOf, lane } from '../support/jobs';
import { idsOf } from '../support/seed';
import { initEvent, release, script, send, settled, toolEvent, waitFor } from '../pipeline/support';

/** Resolves once the fake observer has seen `n` requests of the scenario. */
const arrived = (id: string, n: number) =>
  fetch(`${env.FAKE_LLM_URL}/__scenario/${id}?arrived=${n}`).then((r) => r.text());

async function teamOn(rule: string): Promise<TestIdentity & { teamId: number }> {
  const id = { team: fresh('team'), user: fresh('user'), device: fresh('dev') };
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`${BASE}/api/admin/teams`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_SECRET}`, 'content-type': 'application/json' },
      body: JSON.stringify(id),
    }),
    { ...env, SHARD_NEW_TEAMS: rule },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  const { token } = (await res.json()) as { token: string };
  const identity = { ...id, token };
  return { ...identity, teamId: (await idsOf(identity)).teamId };
}

/** Rows on `db` whose project or session is another team's: must always be none. */
async function crossTeamRows(db: D1Database): Promise<number> {
  const n = await db
    .prepare(
      `SELECT (SELECT COUNT(*) FROM observations r LEFT JOIN sessions s ON s.id = r.session_id LEFT JOIN projects p ON p.id = r.project_id
                WHERE s.team_id IS NOT r.team_id OR p.team_id IS NOT r.team_id)
            + (SELECT COUNT(*) FROM summaries r LEFT JOIN sessions s ON s.id = r.session_id LEFT JOIN projects p ON p.id = r.project_id
                WHERE s.team_id IS NOT r.team_id OR p.team_id IS NOT r.team_id)
            + (SELECT COUNT(*) FROM prompts r LEFT JOIN sessions s ON s.id = r.session_id LEFT JOIN projects p ON p.id = r.project_id
                WHERE s.team_id IS NOT r.team_id OR p.team_id IS NOT r.team_id) AS n`,
    )
    .first<{ n: number }>();
  return n!.n;
}

/** Another team's memory on DB_1: a session with an observation, through the real pipeline. */
async function otherTeamOnDb1() {
  const b = await teamOn('DB_1');
  const sid = fresh('sb');
  await send(b.token, 'init', initEvent(sid, 'Fix the flaky login test'));
  await send(b.token, 'observations', toolEvent(sid, 'npm test -- login'));
  await waitFor(b.token, sid, (s) => settled(s) && s.observations_stored >= 1);
  return { b, sid };
}

const TWENTY_MIN = 20 * 60_000;

describe('the same-team constraint', () => {
  it("refuses an observation, summary or prompt naming another team's session or project", async () => {
    const { b } = await otherTeamOnDb1();
    const a = await teamOn('DB_1');
    const row = await env.DB_1.prepare('SELECT session_id, project_id FROM observations WHERE team_id = ? LIMIT 1')
      .bind(b.teamId)
      .first<{ session_id: number; project_id: number }>();
    const insert = env.DB_1.prepare(
      `INSERT INTO observations (team_id, project_id, session_id, prompt_number, type, title, facts, narrative, concepts, files_read, files_modified, content_hash, created_at, stored_at, author_user_id)
       VALUES (?, ?, ?, 1, 'discovery', 'planted', '[]', 'x', '[]', '[]', '[]', ?, 1, 1, (SELECT id FROM users WHERE team_id = ? LIMIT 1))`,
    ).bind(a.teamId, row!.project_id, row!.session_id, fresh('h'), a.teamId);
    await expect(insert.run()).rejects.toThrow(/cross_team_row/);
    const prompt = env.DB_1.prepare(
      `INSERT INTO prompts (team_id, project_id, session_id, prompt_number, text, created_at, author_user_id) VALUES (?, ?, ?, 99, 'planted', 1, (SELECT id FROM users WHERE team_id = ? LIMIT 1))`,
    ).bind(a.teamId, row!.project_id, row!.session_id, a.teamId);
    await expect(prompt.run()).rejects.toThrow(/cross_team_row/);
    expect(
      await env.DB_1.prepare("SELECT COUNT(*) AS n FROM observations WHERE title = 'planted' OR team_id = ?")
        .bind(a.teamId)
        .first<{ n: number }>(),
    ).toEqual({ n: 0 });
  });
});

describe('a move while a session holds events with a forged clock', { timeout: 120_000 }, () => {
  it('waits for the session object (not the clock), refuses writes meanwhile with 503 team_moving, and moves once the events are stored', async () => {
    const { b } = await otherTeamOnDb1();
    const a = await teamOn('DB');
    const sid = fresh('sa');
    // Tool calls "from 20 minutes ago" (a forged clock), whose observer turn is held open by the fake observer.
    const tag = fresh('hold');
    await script(tag, [], 0, { hold: true });
    await send(
      a.token,
      'init',
      initEvent(sid, 'Make the build green', { occurred_at: Date.now() - TWENTY_MIN - 1_000 }),
    );
    for (const cmd of [`npm run build SCENARIO:${tag}`, 'npm run lint']) {
      expect(
        (await send(a.token, 'observations', toolEvent(sid, cmd, { occurred_at: Date.now() - TWENTY_MIN }))).status,
      ).toBe(202);
    }
    await arrived(tag, 1);

    const job = await startJob(env, moveJob, a.teamId, { to: 'DB_1', force: false, settleMs: 0 });
    // The copy runs first with writes open; then the gate closes and the move waits for the session.
    for (let i = 0; i < 40 && (await jobOf(a.teamId, job.id))!.progress.phase !== 'quiesce'; i++)
      await runDurableObjectAlarm(lane(a.teamId));
    for (let i = 0; i < 3; i++) await runDurableObjectAlarm(lane(a.teamId));
    const waiting = (await jobOf(a.teamId, job.id))!;
    expect(waiting.status).toBe('running');
    expect(waiting.progress.phase).toBe('quiesce');
    expect(await env.DB.prepare('SELECT shard FROM team_shards WHERE team_id = ?').bind(a.teamId).first()).toBeNull();

    // Writes are refused while the team moves, with a retry hint; nothing is taken.
    expect(await teamStub(env, a.teamId).writeGate()).toMatchObject({ moving: true });
    const refused = await call('/api/sessions/observations', { token: a.token, json: toolEvent(sid, 'npm test') });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('team_moving');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const remembered = await call('/mcp', {
      token: a.token,
      method: 'POST',
      headers: { accept: 'application/json, text/event-stream' },
      json: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'remember', arguments: { project: 'github.com/acme/x', text: 'Remember the locale.' } },
      },
    });
    const rememberedText = await remembered.text();
    expect(rememberedText, rememberedText).toContain('team_moving');

    // Still waiting: the session object holds its open turn, whatever its clients' clocks say.
    expect((await jobOf(a.teamId, job.id))!.progress.phase).toBe('quiesce');
    // The turn ends and stores on the old database; then the move goes on by itself.
    await release(tag);
    await waitFor(a.token, sid, (s) => settled(s) && s.observations_stored >= 1);
    const done = await finishJob(a.teamId, job.id);
    expect(done.status, JSON.stringify(done.error)).toBe('done');
    expect(
      await env.DB.prepare('SELECT shard FROM team_shards WHERE team_id = ?').bind(a.teamId).first<{ shard: string }>(),
    ).toEqual({ shard: 'DB_1' });

    expect(await crossTeamRows(env.DB_1)).toBe(0);
    expect(await crossTeamRows(env.DB)).toBe(0);
    const mine = await env.DB_1.prepare('SELECT COUNT(*) AS n FROM observations WHERE team_id = ?')
      .bind(a.teamId)
      .first<{ n: number }>();
    expect(mine!.n).toBeGreaterThanOrEqual(1);
    // The other team's forget works on its own rows.
    const bSession = await env.DB_1.prepare('SELECT id FROM observations WHERE team_id = ? LIMIT 1')
      .bind(b.teamId)
      .first<{ id: number }>();
    const forgot = await call('/api/forget', { token: b.token, json: { kind: 'observation', id: bSession!.id } });
    expect(forgot.status, await forgot.clone().text()).toBe(200);
    // And writes are taken again, on the new database.
    expect((await send(a.token, 'observations', toolEvent(sid, 'npm test'))).status).toBe(202);
  });

  it("forced, moves at once and re-points the buffered events at the team's own new rows: none lands on another team's", async () => {
    const { b, sid: bSid } = await otherTeamOnDb1();
    const a = await teamOn('DB');
    const sid = fresh('sa');
    // The tool calls name their prompt, which arrives only after the move: they wait for it in the session object
    // (by the server's clock), so no turn takes them before the move, however slowly the test runs. (Without a
    // prompt id they were observed GATHER_MS after the first arrived: on a loaded machine, before the third.)
    const promptId = fresh('p');
    for (const cmd of ['npm run build', 'npm run lint', 'npm run test']) {
      await send(
        a.token,
        'observations',
        toolEvent(sid, cmd, { occurred_at: Date.now() - TWENTY_MIN, prompt_id: promptId }),
      );
    }
    expect((await sessionStub(env, a.teamId, sid).status()).pending).toBe(3);
    const job = await startJob(env, moveJob, a.teamId, { to: 'DB_1', force: true, settleMs: 0 });
    const done = await finishJob(a.teamId, job.id);
    expect(done.status, JSON.stringify(done.error)).toBe('done');
    // The prompt arrives after the move: the waiting events are filed under it and stored on DB_1, as team A's.
    await send(
      a.token,
      'init',
      initEvent(sid, 'Make the build green', { occurred_at: Date.now() - TWENTY_MIN - 1_000, prompt_id: promptId }),
    );
    await waitFor(a.token, sid, (s) => settled(s) && s.observations_stored >= 1);
    expect(await crossTeamRows(env.DB_1)).toBe(0);
    const rows = await env.DB_1.prepare(
      'SELECT COUNT(*) AS n FROM observations o JOIN sessions s ON s.id = o.session_id WHERE o.team_id = ? AND s.session_key = ?',
    )
      .bind(a.teamId, sid)
      .first<{ n: number }>();
    expect(rows!.n).toBeGreaterThanOrEqual(1);
    // Team B's session is untouched and its forget works.
    const forgot = await call('/api/forget', { token: b.token, json: { kind: 'session', session_id: bSid } });
    expect(forgot.status, await forgot.clone().text()).toBe(200);
    expect(
      await env.DB_1.prepare('SELECT COUNT(*) AS n FROM observations WHERE team_id = ?')
        .bind(b.teamId)
        .first<{ n: number }>(),
    ).toEqual({ n: 0 });
  });
});
