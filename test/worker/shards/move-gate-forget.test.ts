// Forget and restore pass the team's write gate (issue 27): while a team moves between databases, a forget of a
// record, a session or a project is refused with 503 team_moving and a Retry-After (a forget the move had
// already copied would come back on the new database), and the forget-project and restore jobs wait for the gate
// instead of writing on the database the team is leaving. After the move, the same forget works and the rows
// are gone from both databases. The other paths that change rows a move may already have copied (corrections,
// review decisions, project rename and visibility, retention sweeps, consolidation) pass the same gate.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { startJob } from '../../../src/jobs/start';
import { forgetProjectJob } from '../../../src/forget/project-job';
import { consolidateJob } from '../../../src/consolidation/job';
import { retentionSweepJob } from '../../../src/retention/sweep-job';
import { restoreJob } from '../../../src/backup/restore-job';
import { judgeHeldJob } from '../../../src/hold/backfill-job';
import { HOSTILE } from '../trust/hostile';
import { configOf } from '../../../src/config';
import { stepContext } from '../../../src/jobs/step';
import { teamStub } from '../../../src/slots/team-do';
import { moveJob } from '../../../src/transfer/move-job';
import { call, fresh } from '../support/http';
import { finishJob, runKindInline } from '../support/jobs';
import { idsOf, seedObservation, seedProject, seedSession } from '../support/seed';
import { newOwner } from '../teams/support';
import { importNow } from '../support/import';

const T0 = Date.parse('2026-05-04T09:00:00Z');
const ndjson = (records: unknown[]) => records.map((x) => JSON.stringify(x)).join('\n');

/** A team on DB with one project: a session, two observations, a prompt. */
async function teamWithMemory() {
  const a = await newOwner();
  const ids = await idsOf(a);
  const project = `github.com/a/${fresh('p')}`;
  const session = fresh('s');
  const at = (n: number) => ({
    session_key: session,
    prompt_number: 1,
    prompt_id: null,
    author: a.user,
    created_at: T0 + n,
  });
  const obs = (n: number) => ({
    kind: 'observation',
    ...at(n),
    type: 'discovery',
    title: `gate ${n}`,
    subtitle: null,
    facts: [],
    narrative: `gate ${n}`,
    concepts: [],
    files_read: [],
    files_modified: [],
    discovery_tokens: 0,
    content_hash: fresh('h'),
    agent_id: null,
    agent_type: null,
    source: 'observer',
  });
  const res = await importNow(
    a.token,
    ndjson([
      { kind: 'project', key: project, visibility: 'team', owner: null, created_at: T0 },
      {
        kind: 'session',
        session_key: session,
        project,
        user: a.user,
        platform: 'claude-code',
        prompt_count: 1,
        started_at: T0,
        ended_at: null,
      },
      { kind: 'prompt', ...at(0), text: 'the gate prompt' },
      obs(1),
      obs(2),
    ]),
  );
  expect(res.status, await res.clone().text()).toBe(200);
  const obsId = (await env.DB.prepare('SELECT id FROM observations WHERE team_id = ? ORDER BY id LIMIT 1')
    .bind(ids.teamId)
    .first<{ id: number }>())!.id;
  return { a, teamId: ids.teamId, project, session, obsId };
}

const rowsOn = async (d: D1Database, teamId: number) =>
  (await d
    .prepare(
      'SELECT (SELECT COUNT(*) FROM observations WHERE team_id = ?1) + (SELECT COUNT(*) FROM prompts WHERE team_id = ?1) AS n',
    )
    .bind(teamId)
    .first<{ n: number }>())!.n;

describe('forget during a team move', { timeout: 120_000 }, () => {
  it('refuses a forget of a record, a session or a project with 503 team_moving and a Retry-After, and forgets on the new database after', async () => {
    const t = await teamWithMemory();
    // The gate as the move's first step closes it (the move's own steps are driven in the next test).
    await teamStub(env, t.teamId).closeWrites('test-move', Date.now());
    expect(await teamStub(env, t.teamId).writeGate()).toMatchObject({ moving: true });

    const forgets = [
      { kind: 'observation', id: t.obsId },
      { kind: 'session', session_id: t.session },
      { kind: 'project', project: t.project, confirm: 3 },
    ];
    for (const body of forgets) {
      const res = await call('/api/forget', { token: t.a.token, json: body });
      expect(res.status, `${body.kind}: ${await res.clone().text()}`).toBe(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('team_moving');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    const mcp = await call('/mcp', {
      token: t.a.token,
      method: 'POST',
      headers: { accept: 'application/json, text/event-stream' },
      json: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'forget', arguments: { id: t.obsId } } },
    });
    const mcpText = await mcp.text();
    expect(mcpText, mcpText).toContain('team_moving');

    // Nothing was forgotten behind the move's back; then the move runs, and the forget works where the team is now.
    expect(await rowsOn(env.DB, t.teamId)).toBe(3);
    await teamStub(env, t.teamId).openWrites('test-move', null, Date.now());
    const move = await startJob(env, moveJob, t.teamId, { to: 'DB_1', force: false, settleMs: 0 });
    expect((await finishJob(t.teamId, move.id)).status).toBe('done');
    expect(await rowsOn(env.DB_1, t.teamId)).toBe(3);
    const res = await call('/api/forget', {
      token: t.a.token,
      json: { kind: 'project', project: t.project, confirm: 3 },
    });
    expect(res.status, await res.clone().text()).toBe(202);
    const { job: forget } = (await res.json()) as { job: { id: string } };
    expect((await finishJob(t.teamId, forget.id)).status).toBe('done');
    expect(await rowsOn(env.DB_1, t.teamId)).toBe(0);
    expect(await rowsOn(env.DB, t.teamId)).toBe(0);
  });

  it('holds a forget-project job while the gate is closed, and then deletes the project where the team now lives', async () => {
    const t = await teamWithMemory();
    const projectId = (await env.DB.prepare('SELECT id FROM projects WHERE team_id = ? AND key = ?')
      .bind(t.teamId, t.project)
      .first<{ id: number }>())!.id;
    await teamStub(env, t.teamId).closeWrites('test-move', Date.now());
    const ctx = stepContext({
      env,
      jobId: 'inline',
      teamId: t.teamId,
      actorUserId: null,
      budget: configOf(env).jobStep,
    });
    const p = { projectId, key: t.project, total: 3 };
    const held = await forgetProjectJob.step(
      ctx,
      p,
      forgetProjectJob.init(p, { teamId: t.teamId, now: Date.now() }).cursor,
    );
    expect(held.done).toBe(false);
    expect(held.waitMs).toBeGreaterThan(0);
    expect(await rowsOn(env.DB, t.teamId)).toBe(3);
    await teamStub(env, t.teamId).openWrites('test-move', null, Date.now());
    // Asked for before a move, run after it: the project is found by its key on the new database.
    const move = await startJob(env, moveJob, t.teamId, { to: 'DB_1', force: false, settleMs: 0 });
    expect((await finishJob(t.teamId, move.id)).status).toBe('done');
    expect(await rowsOn(env.DB_1, t.teamId)).toBe(3);
    const forgot = await runKindInline(env, forgetProjectJob, t.teamId, p);
    expect(forgot.done).toBe(true);
    expect(await rowsOn(env.DB_1, t.teamId)).toBe(0);
    expect(await rowsOn(env.DB, t.teamId)).toBe(0);
  });

  it('holds a restore while the gate is closed: it writes nothing on the database the team is leaving', async () => {
    const t = await teamWithMemory();
    await teamStub(env, t.teamId).closeWrites('test-move', Date.now());
    const ctx = stepContext({
      env,
      jobId: 'inline',
      teamId: t.teamId,
      actorUserId: null,
      budget: configOf(env).jobStep,
    });
    const p = { backup: `${fresh('team')}/2026-05-04T09-00-00Z` };
    const out = await restoreJob.step(ctx, p, restoreJob.init(p, { teamId: t.teamId, now: Date.now() }).cursor);
    expect(out.done).toBe(false);
    expect(out.waitMs).toBeGreaterThan(0);
    await teamStub(env, t.teamId).openWrites('test-move', null, Date.now());
  });
});

/** The observation's correction state and its project's key and visibility, read from `d`. */
const stateOn = async (d: D1Database, obsId: number, teamId: number) =>
  d
    .prepare(
      `SELECT o.superseded_by AS by, o.deleted_at AS gone, p.key AS key, p.visibility AS visibility,
              (SELECT COUNT(*) FROM observation_signals s WHERE s.observation_id = o.id) AS signals
       FROM observations o JOIN projects p ON p.id = o.project_id WHERE o.id = ? AND o.team_id = ?`,
    )
    .bind(obsId, teamId)
    .first<{ by: number | null; gone: number | null; key: string; visibility: string; signals: number }>();

describe('other changes to copied rows during a team move', { timeout: 120_000 }, () => {
  it('refuses a correction, feedback, a review decision and a project rename or visibility change with 503 team_moving, and changes nothing on the database the team is leaving', async () => {
    const t = await teamWithMemory();
    const before = await stateOn(env.DB, t.obsId, t.teamId);
    await teamStub(env, t.teamId).closeWrites('test-move', Date.now());
    const writes: [string, unknown][] = [
      ['/api/corrections/supersede', { id: t.obsId, reason: 'out of date' }],
      ['/api/corrections/feedback', { id: t.obsId, kind: 'wrong' }],
      [`/api/admin/review/${t.obsId}`, { decision: 'keep' }],
      ['/api/admin/projects/visibility', { key: t.project, visibility: 'private' }],
      ['/api/admin/projects/rename', { from: t.project, to: `${t.project}-renamed` }],
    ];
    for (const [path, json] of writes) {
      const res = await call(path, { token: t.a.token, json });
      expect(res.status, `${path}: ${await res.clone().text()}`).toBe(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('team_moving');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(await stateOn(env.DB, t.obsId, t.teamId)).toEqual(before);

    // The same requests are good ones: with the gate open they change the rows.
    await teamStub(env, t.teamId).openWrites('test-move', null, Date.now());
    for (const [path, json] of writes) {
      const res = await call(path, { token: t.a.token, json });
      expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    }
    const after = await stateOn(env.DB, t.obsId, t.teamId);
    expect(after).toMatchObject({ key: `${t.project}-renamed`, visibility: 'private' });
    expect(after).not.toEqual(before);
  });

  it('holds a retention sweep and a consolidation job while the gate is closed, and the sweep deletes after it opens', async () => {
    const t = await teamWithMemory();
    const projectId = (await env.DB.prepare('SELECT id FROM projects WHERE team_id = ? AND key = ?')
      .bind(t.teamId, t.project)
      .first<{ id: number }>())!.id;
    await teamStub(env, t.teamId).closeWrites('test-move', Date.now());
    const ctx = () =>
      stepContext({ env, jobId: 'inline', teamId: t.teamId, actorUserId: null, budget: configOf(env).jobStep });
    // Every record is older than the cutoff: an unheld sweep would delete all three.
    const sweep = { before: Date.now() + 60_000, days: 1 };
    const swept = await retentionSweepJob.step(
      ctx(),
      sweep,
      retentionSweepJob.init(sweep, { teamId: t.teamId, now: Date.now() }).cursor,
    );
    expect(swept).toMatchObject({ done: false });
    expect(swept.waitMs).toBeGreaterThan(0);
    const merge = { projectId };
    const merged = await consolidateJob.step(
      ctx(),
      merge,
      consolidateJob.init(merge, { teamId: t.teamId, now: Date.now() }).cursor,
    );
    expect(merged).toMatchObject({ done: false });
    expect(merged.waitMs).toBeGreaterThan(0);
    expect(await rowsOn(env.DB, t.teamId)).toBe(3);

    await teamStub(env, t.teamId).openWrites('test-move', null, Date.now());
    expect((await runKindInline(env, retentionSweepJob, t.teamId, sweep)).done).toBe(true);
    expect(await rowsOn(env.DB, t.teamId)).toBe(0);
  });

  it('holds a judge-held job while the gate is closed, and after a move judges every row again where the team now lives', async () => {
    const a = await newOwner();
    const ids = await idsOf(a);
    const projectId = await seedProject(ids, `github.com/a/${fresh('old')}`);
    const session = await seedSession(ids, projectId, fresh('s'));
    // Stored straight into the table, as before the hold-back: no verdict.
    await seedObservation(ids, projectId, session, { title: HOSTILE[0]!.title, narrative: HOSTILE[0]!.text });
    const heldOn = async (d: D1Database) =>
      (await d
        .prepare('SELECT COUNT(*) AS n FROM observations WHERE team_id = ? AND held_kinds IS NOT NULL')
        .bind(ids.teamId)
        .first<{ n: number }>())!.n;
    const ctx = () =>
      stepContext({ env, jobId: 'inline', teamId: ids.teamId, actorUserId: null, budget: configOf(env).jobStep });

    await teamStub(env, ids.teamId).closeWrites('test-move', Date.now());
    const waiting = await judgeHeldJob.step(
      ctx(),
      {},
      judgeHeldJob.init({}, { teamId: ids.teamId, now: Date.now() }).cursor,
    );
    expect(waiting).toMatchObject({ done: false });
    expect(waiting.waitMs).toBeGreaterThan(0);
    expect(await heldOn(env.DB)).toBe(0);
    await teamStub(env, ids.teamId).openWrites('test-move', null, Date.now());

    // A cursor saved on DB past every observation id there; then the team moves and its rows get new ids.
    const move = await startJob(env, moveJob, ids.teamId, { to: 'DB_1', force: false, settleMs: 0 });
    expect((await finishJob(ids.teamId, move.id)).status).toBe('done');
    // Unjudged there too (however the copy carried it): only the job can hold it now.
    await env.DB_1.prepare('UPDATE observations SET held_kinds = NULL WHERE team_id = ?').bind(ids.teamId).run();
    let cursor = { k: 0, after: Number.MAX_SAFE_INTEGER, judged: 0, held: 0, shard: 'DB' };
    for (let i = 0; i < 20; i++) {
      const out = await judgeHeldJob.step(ctx(), {}, cursor);
      cursor = out.cursor as typeof cursor;
      if (out.done) break;
    }
    expect(cursor.held).toBe(1);
    expect(await heldOn(env.DB_1)).toBe(1);
  });
});
