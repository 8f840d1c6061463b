// Two local D1 databases (DB, the directory and first shard, and DB_1): a team on each. Every write lands on its
// team's database only (both are queried directly), reads answer from it, nothing crosses, and a team moved
// between them with export/import answers the same before and after, leaving nothing behind.
import { createExecutionContext, runInDurableObject, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { configOf } from '../../../src/config';
import { describe, expect, it, vi } from 'vitest';
import app from '../../../src/app';
import { chooseShard, vectorIdPrefix } from '../../../src/db/shards';
import { startJob } from '../../../src/jobs/start';
import { moveJob } from '../../../src/transfer/move-job';
import { finishJob, lane } from '../support/jobs';
import { VectorizeVectorIndex } from '../../../src/vectors/vectorize-index';
import { allVectorIds } from '../../../src/vectors/keys';
import { ADMIN_SECRET, BASE, call, fresh, type TestIdentity } from '../support/http';
import { comparableContext } from '../support/comparable';
import { importNow } from '../support/import';
import { idsOf } from '../support/seed';
import { initEvent, send, settled, toolEvent, waitFor } from '../pipeline/support';
import { mcp } from '../teams/isolation-support';

type Shard = 'DB' | 'DB_1';
const database = (s: Shard): D1Database => env[s];

/** Bootstraps a team through the real route with a placement rule (SHARD_NEW_TEAMS) of the test's choosing. */
async function teamPlacedBy(rule: string): Promise<TestIdentity & { teamId: number }> {
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
  if (res.status !== 201) throw new Error(`bootstrap: ${res.status} ${await res.text()}`);
  const { token } = (await res.json()) as { token: string };
  const identity = { ...id, token };
  return { ...identity, teamId: (await idsOf(identity)).teamId };
}

const CONTENT = [
  'projects',
  'sessions',
  'prompts',
  'observations',
  'observation_files',
  'summaries',
  'audit_log',
  'local_vectors',
] as const;

/** The team's rows per memory table on one database. */
async function rowsOn(s: Shard, teamId: number): Promise<Record<string, number>> {
  const db = database(s);
  const counts = await db.batch(
    CONTENT.map((t) => db.prepare(`SELECT COUNT(*) AS n FROM ${t} WHERE team_id = ?`).bind(teamId)),
  );
  return Object.fromEntries(CONTENT.map((t, i) => [t, (counts[i]!.results[0] as { n: number }).n]));
}
const total = (rows: Record<string, number>) => Object.values(rows).reduce((a, b) => a + b, 0);

const mapped = async (teamId: number) =>
  (await env.DB.prepare('SELECT shard FROM team_shards WHERE team_id = ?').bind(teamId).first<{ shard: string }>())
    ?.shard ?? null;

/** A small memory with a word nobody else uses, written through the import route (user, project, session, prompt, observations, summary). */
function memoryOf(id: TestIdentity, word: string, project: string): string {
  const t0 = Date.parse('2026-05-04T09:00:00Z');
  const session = `sess-${word}`;
  const at = { session_key: session, prompt_number: 1, prompt_id: null, author: id.user };
  return [
    { kind: 'user', handle: id.user, role: 'owner', created_at: t0 },
    { kind: 'project', key: project, visibility: 'team', owner: null, created_at: t0 },
    {
      kind: 'session',
      session_key: session,
      project,
      user: id.user,
      platform: 'claude-code',
      prompt_count: 1,
      started_at: t0,
      ended_at: null,
    },
    { kind: 'prompt', ...at, created_at: t0, text: `please fix the ${word} cache` },
    ...[0, 1].map((i) => ({
      kind: 'observation',
      ...at,
      created_at: t0 + 1_000 * (i + 1),
      type: 'bugfix',
      title: `Fixed the ${word} cache key ${i}`,
      subtitle: null,
      facts: [`${word} keys include the locale`],
      narrative: `The ${word} cache key missed the locale.`,
      concepts: [],
      files_read: [],
      files_modified: [`src/${word}.ts`],
      discovery_tokens: 10,
      content_hash: `${word}-${i}`,
      agent_id: null,
      agent_type: null,
      source: 'observer',
    })),
    {
      kind: 'summary',
      ...at,
      created_at: t0 + 5_000,
      request: `Fix the ${word} bug`,
      investigated: 'The cache',
      learned: 'The locale was missing',
      completed: 'Fixed',
      next_steps: '',
      notes: '',
      content_hash: `${word}-s`,
    },
  ]
    .map((r) => JSON.stringify(r))
    .join('\n');
}

async function importMemory(id: TestIdentity, word: string, project: string): Promise<void> {
  const res = await importNow(id.token, memoryOf(id, word, project));
  expect(res.status, await res.clone().text()).toBe(200);
}

const searchTitles = async (token: string, q: string) =>
  (
    (await (await call(`/api/search?q=${encodeURIComponent(q)}`, { token })).json()) as { results: { title: string }[] }
  ).results.map((r) => r.title);
const contextOf = async (token: string, project: string) =>
  (await call(`/api/context?project=${encodeURIComponent(project)}&tz=UTC`, { token })).text();
const exportOf = async (token: string) => (await call('/api/admin/export', { token })).text();
const word = () => `w${Math.random().toString(36).slice(2, 10)}`;

describe('placement', () => {
  it('takes the open shard holding the fewest teams, the first listed on a tie', () => {
    expect(
      chooseShard(
        ['DB', 'DB_1'],
        new Map([
          ['DB', 3],
          ['DB_1', 1],
        ]),
      ),
    ).toBe('DB_1');
    expect(
      chooseShard(
        ['DB', 'DB_1'],
        new Map([
          ['DB', 2],
          ['DB_1', 2],
        ]),
      ),
    ).toBe('DB');
    expect(chooseShard(['DB_1', 'DB'], new Map([['DB', 2]]))).toBe('DB_1');
    expect(chooseShard(['DB_2'], new Map([['DB', 0]]))).toBe('DB_2');
  });

  it('puts a new team where SHARD_NEW_TEAMS says, with a copy of its member rows and its first audit row there', async () => {
    const b = await teamPlacedBy('DB_1');
    expect(await mapped(b.teamId)).toBe('DB_1');
    const copy = await env.DB_1.prepare('SELECT u.handle FROM users u JOIN teams t ON t.id = u.team_id WHERE t.id = ?')
      .bind(b.teamId)
      .all<{ handle: string }>();
    expect(copy.results.map((r) => r.handle)).toEqual([b.user]);
    expect((await rowsOn('DB_1', b.teamId)).audit_log).toBe(1);
    expect(await rowsOn('DB', b.teamId)).toEqual(Object.fromEntries(CONTENT.map((t) => [t, 0])));
    // The token itself stays in the directory: it is looked up before its team is known.
    expect(
      await env.DB.prepare('SELECT COUNT(*) AS n FROM tokens WHERE team_id = ?').bind(b.teamId).first<{ n: number }>(),
    ).toEqual({ n: 1 });
    expect(await env.DB_1.prepare('SELECT COUNT(*) AS n FROM tokens').first<{ n: number }>()).toEqual({ n: 0 });
  });

  it('keeps a team without a map row on DB, and refuses a rule naming an unbound database before writing anything', async () => {
    const a = await teamPlacedBy('DB');
    expect(await mapped(a.teamId)).toBeNull();
    expect((await rowsOn('DB', a.teamId)).audit_log).toBe(1);

    const team = fresh('team');
    const ctx = createExecutionContext();
    const res = await app.fetch(
      new Request(`${BASE}/api/admin/teams`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_SECRET}`, 'content-type': 'application/json' },
        body: JSON.stringify({ team, user: 'u' }),
      }),
      { ...env, SHARD_NEW_TEAMS: 'DB,DB_7' },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_config');
    expect(
      await env.DB.prepare('SELECT COUNT(*) AS n FROM teams WHERE slug = ?').bind(team).first<{ n: number }>(),
    ).toEqual({ n: 0 });
  });
});

describe('a team on each database', { timeout: 60_000 }, () => {
  it("writes every route's rows on the team's own database only: import, ingest and the observer, remember, admin", async () => {
    const a = await teamPlacedBy('DB');
    const b = await teamPlacedBy('DB_1');
    for (const [id, w] of [
      [a, word()],
      [b, word()],
    ] as const) {
      await importMemory(id, w, `github.com/acme/${w}`);
      const sid = fresh('s');
      await send(id.token, 'init', initEvent(sid, `Make the ${w} build green`));
      await send(id.token, 'observations', toolEvent(sid, `npm run build -- ${w}`));
      await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored >= 1);
      const remembered = await mcp(id.token, 'tools/call', {
        name: 'remember',
        arguments: { project: `github.com/acme/${w}`, text: `Remember that ${w} needs the locale.` },
      });
      expect(remembered.text).toContain(w);
      const settings = await call('/api/admin/settings', {
        token: id.token,
        method: 'PATCH',
        json: { context_observations: 20 },
      });
      expect(settings.status).toBe(200);
    }
    const onA = await rowsOn('DB', a.teamId);
    const onB = await rowsOn('DB_1', b.teamId);
    for (const rows of [onA, onB]) {
      expect(rows.projects).toBeGreaterThanOrEqual(1);
      expect(rows.sessions).toBeGreaterThanOrEqual(3); // imported, ingested, the remember session
      expect(rows.prompts).toBeGreaterThanOrEqual(2);
      expect(rows.observations).toBeGreaterThanOrEqual(4);
      expect(rows.summaries).toBeGreaterThanOrEqual(1);
      expect(rows.audit_log).toBeGreaterThanOrEqual(2); // bootstrap, settings
    }
    expect(total(await rowsOn('DB_1', a.teamId))).toBe(0);
    expect(total(await rowsOn('DB', b.teamId))).toBe(0);
    // Settings are written in the directory (where tokens read them) and copied to the team's database.
    const settingsOf = async (s: Shard) =>
      JSON.parse(
        (await database(s)
          .prepare('SELECT settings FROM teams WHERE id = ?')
          .bind(b.teamId)
          .first<{ settings: string }>())!.settings,
      ) as Record<string, unknown>;
    expect(await settingsOf('DB')).toEqual({ context_observations: 20 });
    expect(await settingsOf('DB_1')).toEqual({ context_observations: 20 });
  });

  it("searches, builds context, exports and forgets on the team's own database, never the other's", async () => {
    const a = await teamPlacedBy('DB');
    const b = await teamPlacedBy('DB_1');
    const [wa, wb] = [word(), word()];
    const [pa, pb] = [`github.com/acme/${wa}`, `github.com/acme/${wb}`];
    await importMemory(a, wa, pa);
    await importMemory(b, wb, pb);

    expect(await searchTitles(b.token, wb)).toEqual(
      expect.arrayContaining([`Fixed the ${wb} cache key 0`, `Fixed the ${wb} cache key 1`]),
    );
    expect(await searchTitles(a.token, wa)).toHaveLength(2);
    expect(await searchTitles(b.token, wa)).toEqual([]);
    expect(await searchTitles(a.token, wb)).toEqual([]);
    expect(await contextOf(b.token, pb)).toContain(`Fixed the ${wb} cache key`);
    expect(await contextOf(b.token, pa)).not.toContain(`Fixed the ${wa}`);
    const exported = await exportOf(b.token);
    expect(exported).toContain(wb);
    expect(exported).not.toContain(wa);

    // Row ids are per database, so the same id names a row of each team: forgetting B's touches only DB_1.
    const ofB = await env.DB_1.prepare('SELECT id FROM observations WHERE team_id = ? ORDER BY id')
      .bind(b.teamId)
      .all<{ id: number }>();
    const id = ofB.results[0]!.id;
    const sameIdOnDb = async () =>
      env.DB.prepare('SELECT team_id, title FROM observations WHERE id = ?')
        .bind(id)
        .first<{ team_id: number; title: string }>();
    const before = await sameIdOnDb();
    const forgot = await call('/api/forget', { token: b.token, json: { kind: 'observation', id } });
    expect(forgot.status, await forgot.clone().text()).toBe(200);
    expect(
      await env.DB_1.prepare('SELECT COUNT(*) AS n FROM observations WHERE id = ?').bind(id).first<{ n: number }>(),
    ).toEqual({ n: 0 });
    expect(await sameIdOnDb()).toEqual(before);
    // And A's token forgetting an id that exists only on DB_1 (B's) finds nothing on A's database.
    const second = ofB.results[1]!.id;
    const onlyB = await env.DB.prepare('SELECT COUNT(*) AS n FROM observations WHERE id = ? AND team_id = ?')
      .bind(second, a.teamId)
      .first<{ n: number }>();
    if (onlyB?.n === 0)
      expect((await call('/api/forget', { token: a.token, json: { kind: 'observation', id: second } })).status).toBe(
        404,
      );
    expect(
      await env.DB_1.prepare('SELECT COUNT(*) AS n FROM observations WHERE id = ?').bind(second).first<{ n: number }>(),
    ).toEqual({ n: 1 });
  });
});

describe('one Vectorize index for every database', () => {
  it("gives a team on DB_1 vector ids with its database in front, and reads back only its own database's ids", async () => {
    const a = await teamPlacedBy('DB');
    const b = await teamPlacedBy('DB_1');
    const upsert = vi.spyOn(env.VECTORS!, 'upsert').mockResolvedValue({ mutationId: 'm1' } as never);
    const del = vi.spyOn(env.VECTORS!, 'deleteByIds').mockResolvedValue({ mutationId: 'm2' } as never);
    const matches = [
      { id: 'DB_1:7', score: 0.9 },
      { id: '7', score: 0.8 },
      { id: 'DB_2:7', score: 0.7 },
      { id: 'DB_1:x', score: 0.6 },
    ];
    vi.spyOn(env.VECTORS!, 'query').mockResolvedValue({ count: matches.length, matches } as never);
    try {
      const idx = new VectorizeVectorIndex(env.VECTORS!, (t) => vectorIdPrefix(env, t));
      // Row 7 of each database: two different observations, two different vectors.
      await idx.upsert(
        [a, b].map((t) => ({ id: 7, teamId: t.teamId, projectId: 1, type: 'bugfix', values: [0.1, 0.2] })),
      );
      expect(upsert.mock.calls[0]![0].map((v) => v.id)).toEqual(['7', 'DB_1:7']);
      await idx.deleteByIds(b.teamId, [7]);
      expect(del).toHaveBeenCalledWith(allVectorIds('DB_1:', 'observation', 7));
      expect(await idx.query([0.1, 0.2], { teamId: b.teamId, topK: 10 })).toEqual([{ id: 7, score: 0.9 }]);
      expect(await idx.query([0.1, 0.2], { teamId: a.teamId, topK: 10 })).toEqual([{ id: 7, score: 0.8 }]);
    } finally {
      vi.restoreAllMocks();
    }
  });
});

describe('moving a team', { timeout: 60_000 }, () => {
  const moveTo = (id: TestIdentity, shard: string, force?: boolean) =>
    call(`/api/admin/teams/${id.team}/move`, { token: ADMIN_SECRET, json: { shard, force } });
  /** The move as a job, run to its end (the old rows' settling time shortened: the test drives the lane). */
  const moveNow = async (teamId: number, to: string, force = false) => {
    const job = await startJob(env, moveJob, teamId, { to, force, settleMs: 0 });
    return finishJob(teamId, job.id);
  };

  it('answers the same after export/import to the other database, updates the map and leaves nothing behind', async () => {
    const c = await teamPlacedBy('DB');
    const w = word();
    const project = `github.com/acme/${w}`;
    await importMemory(c, w, project);
    const sid = fresh('s');
    await send(c.token, 'init', initEvent(sid, `Make the ${w} build green`));
    await send(c.token, 'observations', toolEvent(sid, `npm run build -- ${w}`));
    await waitFor(c.token, sid, (s) => settled(s) && s.observations_stored >= 1);
    const answers = async () => ({
      search: await searchTitles(c.token, w),
      context: await contextOf(c.token, project),
      exported: await exportOf(c.token),
    });
    const before = await answers();
    const rowsBefore = await rowsOn('DB', c.teamId);
    expect(before.search.length).toBeGreaterThanOrEqual(2);

    // Its session holds nothing: the move needs no force, however recently the team wrote.
    const done = await moveNow(c.teamId, 'DB_1');
    expect(done.status, JSON.stringify(done.error)).toBe('done');
    expect(done.result).toMatchObject({ from: 'DB', to: 'DB_1', moved: true });
    // The move is exempted from Free's budget (issue 35, src/transfer/move-job.ts): its steps keep within Paid's.
    expect(done.stats.statements.max).toBeLessThanOrEqual(configOf({ ...env, CAIRN_PLAN: 'paid' }).jobStep.statements);
    expect(await mapped(c.teamId)).toBe('DB_1');
    expect(total(await rowsOn('DB', c.teamId))).toBe(0);
    const rowsAfter = await rowsOn('DB_1', c.teamId);
    // The same rows (the audit log gains nothing from the move itself; vectors are written again).
    expect({ ...rowsAfter, local_vectors: 0 }).toEqual({ ...rowsBefore, local_vectors: 0 });
    const after = await answers();
    expect(after.search).toEqual(before.search);
    expect(after.exported).toEqual(before.exported);
    // Ids differ on the other database, and the header's clock may have passed a minute.
    expect(comparableContext(after.context)).toEqual(comparableContext(before.context));

    // It keeps working where it now lives: the same session goes on, its rows on DB_1.
    await send(c.token, 'observations', toolEvent(sid, `npm test -- ${w}`));
    await waitFor(c.token, sid, (s) => settled(s) && s.observations_stored >= 2);
    expect(total(await rowsOn('DB', c.teamId))).toBe(0);
    expect((await rowsOn('DB_1', c.teamId)).observations).toBe(rowsAfter.observations + 1);

    // And back: the map row goes, DB_1 keeps neither its memory nor its copy of the member rows.
    expect((await moveNow(c.teamId, 'DB')).status).toBe('done');
    expect(await mapped(c.teamId)).toBeNull();
    expect(total(await rowsOn('DB_1', c.teamId))).toBe(0);
    for (const t of ['teams', 'users', 'devices']) {
      const col = t === 'teams' ? 'id' : 'team_id';
      expect(
        await env.DB_1.prepare(`SELECT COUNT(*) AS n FROM ${t} WHERE ${col} = ?`).bind(c.teamId).first<{ n: number }>(),
        t,
      ).toEqual({ n: 0 });
    }
    expect(await searchTitles(c.token, w)).toEqual(after.search.length ? expect.arrayContaining(after.search) : []);
  });

  it('refuses an unbound database and an unknown team, and needs the operator secret', async () => {
    const c = await teamPlacedBy('DB');
    expect((await moveTo(c, 'DB_9')).status).toBe(400);
    expect(
      (await call(`/api/admin/teams/${fresh('nobody')}/move`, { token: ADMIN_SECRET, json: { shard: 'DB_1' } })).status,
    ).toBe(404);
    expect((await call(`/api/admin/teams/${c.team}/move`, { token: c.token, json: { shard: 'DB_1' } })).status).toBe(
      401,
    );
    expect((await call(`/api/admin/teams/${c.team}/move`, { json: { shard: 'DB_1' } })).status).toBe(401);
    expect(await mapped(c.teamId)).toBeNull();
  });

  it('answers a move at once with its job, which the operator follows to its end', async () => {
    const c = await teamPlacedBy('DB');
    const w = word();
    await importMemory(c, w, `github.com/acme/${w}`);
    const res = await moveTo(c, 'DB_1');
    expect(res.status, await res.clone().text()).toBe(202);
    const { job } = (await res.json()) as { job: { id: string; kind: string; status: string } };
    expect(job).toMatchObject({ kind: 'move-team', status: 'queued' });
    const read = await call(`/api/admin/teams/${c.team}/jobs/${job.id}`, { token: ADMIN_SECRET });
    expect(read.status).toBe(200);
    expect((await call(`/api/admin/teams/${c.team}/jobs/${job.id}`, { token: c.token })).status).toBe(401);
    // The old rows' settling time (SHARD_MEMO_MS, 30 s of the wall clock) shortened, as the other moves here do.
    await runInDurableObject(lane(c.teamId), (_o, state) => {
      state.storage.sql.exec("UPDATE jobs SET params = json_set(params, '$.settleMs', 0) WHERE id = ?", job.id);
    });
    const done = await finishJob(c.teamId, job.id, 20_000);
    expect(done.status).toBe('done');
    expect(await mapped(c.teamId)).toBe('DB_1');
    expect(await searchTitles(c.token, w)).toHaveLength(2);
  });
});
