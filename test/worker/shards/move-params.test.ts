// Every statement of a team move binds at most 100 parameters, D1's limit (issue 35): the move copied a page of
// 100 history rows with `observation_id IN (…)` spelled out, 102 parameters, so a team whose consolidation had
// merged 100 records could never be moved (local SQLite allows 32,766, so nothing here noticed). The move runs
// with its D1 bindings refusing any statement of more than 100, over a team with every kind of row in pages of
// more than 100: merges and their events, signals, aliases, prime tombstones, usage, audit rows.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { exportPager, exportStart, type ExportCursor } from '../../../src/transfer/export-cursor';
import { importPart, MAX_IMPORT_LINES, numbered } from '../../../src/transfer/import';
import type { ExportRecord } from '../../../src/transfer/records';
import { D1_MAX_PARAMS, spiedEnv } from '../support/d1-spy';
import { fresh } from '../support/http';
import { moveSteps, seedMemory, teamCounts } from '../support/move';
import { idsOf } from '../support/seed';
import { newOwner } from '../teams/support';

const N = 130;

const count = async (d: D1Database, table: string, teamId: number) =>
  (await d.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE team_id = ?`).bind(teamId).first<{ n: number }>())!.n;

/** A project whose consolidation merged N records into one, with their history, and N of each other extra. */
async function consolidatedTeam() {
  const a = await newOwner();
  const { teamId, userId } = await idsOf(a);
  const d = env.DB;
  const key = `github.com/a/${fresh('merged')}`;
  const p = (await d
    .prepare("INSERT INTO projects (team_id, key, visibility, created_at) VALUES (?, ?, 'team', 1) RETURNING id")
    .bind(teamId, key)
    .first<{ id: number }>())!.id;
  const sessionIds: number[] = [];
  for (let i = 0; i < 3; i++)
    sessionIds.push(
      (await d
        .prepare(
          'INSERT INTO sessions (team_id, session_key, project_id, user_id, started_at) VALUES (?, ?, ?, ?, 1) RETURNING id',
        )
        .bind(teamId, fresh('s'), p, userId)
        .first<{ id: number }>())!.id,
    );
  await d
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO observations (team_id, project_id, session_id, type, title, narrative, created_at, stored_at, content_hash, author_user_id, source)
       SELECT ?, ?, ?, 'discovery', 'fact ' || i, 'the cache needs key ' || i, 1000 + i, 1000 + i, 'h' || i, ?, CASE WHEN i % 2 = 0 THEN 'prime' ELSE 'observer' END FROM n`,
    )
    .bind(N, teamId, p, sessionIds[0], userId)
    .run();
  const survivor = (await d
    .prepare("SELECT id FROM observations WHERE team_id = ? AND content_hash = 'h0'")
    .bind(teamId)
    .first<{ id: number }>())!.id;
  await d.batch([
    d.prepare('UPDATE observations SET merged_into = ?1 WHERE team_id = ?2 AND id <> ?1').bind(survivor, teamId),
    d
      .prepare(
        `INSERT INTO observation_events (team_id, observation_id, action, by_observation_id, actor_user_id, actor, reason, created_at)
         SELECT team_id, id, 'merge', ?1, NULL, 'observer', 'near duplicate', 2000 FROM observations WHERE team_id = ?2 AND id <> ?1`,
      )
      .bind(survivor, teamId),
    d
      .prepare(
        `INSERT INTO observation_signals (observation_id, team_id, fetched, useful, wrong, outdated, review, updated_at)
         SELECT id, team_id, 2, 1, 0, 0, NULL, 3000 FROM observations WHERE team_id = ?`,
      )
      .bind(teamId),
    d
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO project_aliases (team_id, key, project_id, created_at) SELECT ?, ? || '-old-' || i, ?, 1 FROM n`,
      )
      .bind(N, teamId, key, p),
    d
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO prime_tombstones (team_id, project_id, hash, created_at) SELECT ?, ?, printf('%016x', i), 1 FROM n`,
      )
      .bind(N, teamId, p),
    d
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO audit_log (team_id, actor_user_id, action, target, detail, created_at) SELECT ?, ?, 'consolidate.merge', 'observation:' || i, '{}', 4000 + i FROM n`,
      )
      .bind(N, teamId, userId),
    ...sessionIds.map((sid, i) =>
      d
        .prepare(
          `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50)
           INSERT INTO observer_usage (team_id, day, session_id, model, calls, input_tokens, output_tokens) SELECT ?, '2026-05-' || printf('%02d', i % 28 + 1), ?, 'model-' || i, 1, 10, 2 FROM n`,
        )
        .bind(teamId, sid + i * 0),
    ),
  ]);
  return { teamId };
}

describe('a team with consolidation history', { timeout: 300_000 }, () => {
  it(`moves with every statement binding at most ${D1_MAX_PARAMS} parameters, and arrives whole`, async () => {
    const { teamId } = await consolidatedTeam();
    const tables = [
      'observations',
      'observation_events',
      'observation_signals',
      'project_aliases',
      'prime_tombstones',
      'audit_log',
      'observer_usage',
    ];
    const before = await Promise.all(tables.map((t) => count(env.DB, t, teamId)));
    let most = 0;
    const e = spiedEnv(env, (s) => (most = Math.max(most, s.params)), { maxParams: D1_MAX_PARAMS });
    const steps = await moveSteps(e, teamId, { to: 'DB_1' });
    expect(steps.at(-1)!.out.done).toBe(true);
    expect(most).toBeLessThanOrEqual(D1_MAX_PARAMS);
    expect(await Promise.all(tables.map((t) => count(env.DB_1, t, teamId)))).toEqual(before);
    expect(
      await env.DB_1.prepare('SELECT COUNT(*) AS n FROM observations WHERE team_id = ? AND merged_into IS NOT NULL')
        .bind(teamId)
        .first<{ n: number }>(),
    ).toEqual({ n: N });
  });
});

describe('the export and the import of a team with consolidation history', { timeout: 300_000 }, () => {
  it(`bind at most ${D1_MAX_PARAMS} parameters a statement, and the import carries every history line`, async () => {
    const { teamId } = await consolidatedTeam();
    let most = 0;
    const seen = (s: { params: number }) => (most = Math.max(most, s.params));
    const e = spiedEnv(env, seen, { maxParams: D1_MAX_PARAMS });
    const pager = await exportPager(e.DB, teamId, () => true);
    const records: ExportRecord[] = [];
    for (let c: ExportCursor = exportStart(); c.at !== 'done'; ) {
      const page = await pager.page(c);
      records.push(...page.records);
      c = page.next;
    }
    expect(records.filter((r) => r.kind === 'event').length).toBeGreaterThanOrEqual(1);
    // Restored into another team, part by part, as a backup's restore does.
    const b = await newOwner();
    const to = await idsOf(b);
    const h = { teamId: to.teamId, dir: e.DB, team: e.DB };
    for (let i = 0; i < records.length; i += MAX_IMPORT_LINES)
      await importPart(h, { kind: 'restore' }, numbered(records.slice(i, i + MAX_IMPORT_LINES)), Date.now());
    expect(most).toBeLessThanOrEqual(D1_MAX_PARAMS);
    expect(
      await env.DB.prepare('SELECT COUNT(*) AS n FROM observations WHERE team_id = ? AND merged_into IS NOT NULL')
        .bind(to.teamId)
        .first<{ n: number }>(),
    ).toEqual({ n: N });
    expect(await count(env.DB, 'observation_events', to.teamId)).toBe(N);
  });
});

describe('a team move on the Free plan', { timeout: 300_000 }, () => {
  it("sends at most 50 statements in any step (Free's limit per invocation), its pieces sized to the step's budget", async () => {
    const a = await newOwner();
    const ids = await idsOf(a);
    await seedMemory(env.DB, ids, fresh('w').replace(/\W/g, ''), { projects: 2, n: 120 });
    const before = await teamCounts(env.DB, ids.teamId);
    const free = { ...env, CAIRN_PLAN: 'free' } as typeof env;
    const steps = await moveSteps(free, ids.teamId, { to: 'DB_1' });
    const most = Math.max(...steps.map((s) => s.used.statements));
    expect(most, steps.map((s) => `${s.phase}:${s.used.statements}`).join(' ')).toBeLessThanOrEqual(50);
    expect(await teamCounts(env.DB_1, ids.teamId)).toEqual(before);
  });
});
