// Consolidation on the real stack: the `consolidate-project` job over D1 rows, the context index and search a
// teammate sees, the admin's merges list and undo, forget reading storage, and each step's statements metered.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { consolidateJob } from '../../../src/consolidation/job';
import { watchInvocations, type Usage } from '../../../src/db/meter';
import { listJobs } from '../../../src/jobs/start';
import { call, fresh, newIdentity, type TestIdentity } from '../support/http';
import { runKindInline, runOpenJobs } from '../support/jobs';
import { runTeamDay } from '../support/daily';
import { idsOf, seedObservation, seedProject, seedSession, type Ids, type SeedObservation } from '../support/seed';

interface World {
  owner: TestIdentity;
  ids: Ids;
  mate: TestIdentity;
  mateIds: Ids;
  project: string;
  projectId: number;
  session: number;
}

async function world(): Promise<World> {
  const owner = await newIdentity({ role: 'owner' });
  const mate = await newIdentity({ team: owner.team, role: 'member' });
  const [ids, mateIds] = await Promise.all([idsOf(owner), idsOf(mate)]);
  const project = `github.com/acme/${fresh('repo')}`;
  const projectId = await seedProject(ids, project);
  const session = await seedSession(ids, projectId, fresh('s'));
  return { owner, ids, mate, mateIds, project, projectId, session };
}

const skew = (word: string, extra = ''): SeedObservation => ({
  type: 'bugfix',
  title: `Token refresh fails when the clock skews ${word} five minutes`,
  narrative: `The ${word} check in verifyToken compares exp against Date.now() without leeway, so a laptop whose clock runs five minutes fast gets 401 on every refresh. ${extra}`,
  facts: ['verifyToken has no clock leeway', 'refresh returns 401 on skewed clocks'],
  concepts: ['gotcha'],
  filesModified: ['src/auth/verify.ts'],
});

const run = (w: World, e: typeof env = env) =>
  runKindInline(e, consolidateJob, w.ids.teamId, { projectId: w.projectId }, w.ids.userId);
const rowOf = (id: number) =>
  env.DB.prepare('SELECT * FROM observations WHERE id = ?').bind(id).first<Record<string, unknown>>();
const mergedInto = async (id: number) => {
  const row = await rowOf(id);
  return row ? row.merged_into : 'gone';
};

describe('consolidation', { timeout: 60_000 }, () => {
  it('merges near-duplicates of the same files and concepts into the newest, keeping them as provenance, and leaves the rest alone', async () => {
    const w = await world();
    const t0 = Date.UTC(2026, 10, 1);
    const older = await seedObservation(w.ids, w.projectId, w.session, { ...skew('by more than'), createdAt: t0 });
    const newer = await seedObservation(w.ids, w.projectId, w.session, { ...skew('by over'), createdAt: t0 + 60_000 });
    const otherText = await seedObservation(w.ids, w.projectId, w.session, {
      ...skew('x'),
      title: 'Session cookies are SameSite=Lax',
      narrative: 'Cross-site POSTs lose the session cookie.',
      facts: [],
      createdAt: t0 + 1,
    });
    const otherFile = await seedObservation(w.ids, w.projectId, w.session, {
      ...skew('by nearly'),
      filesModified: ['src/auth/refresh.ts'],
      createdAt: t0 + 2,
    });
    const mateSession = await seedSession(w.mateIds, w.projectId, fresh('m'));
    const mates = await seedObservation(w.mateIds, w.projectId, mateSession, {
      ...skew('by nearly'),
      createdAt: t0 + 3,
    });
    const before = await rowOf(older);

    const out = await run(w);
    expect(out.result).toMatchObject({ clusters: 1, merged: 1 });
    expect(await mergedInto(older)).toBe(newer);
    for (const id of [newer, otherText, otherFile, mates]) expect(await mergedInto(id)).toBeNull();
    const events = await env.DB.prepare(
      'SELECT action, actor, by_observation_id AS by, actor_user_id AS who FROM observation_events WHERE observation_id = ?',
    )
      .bind(older)
      .all();
    expect(events.results).toEqual([{ action: 'merge', actor: 'consolidation', by: newer, who: w.ids.userId }]);

    // A teammate's context index and search show the record that stands, not its source.
    const context = await (
      await call(`/api/context?project=${encodeURIComponent(w.project)}`, { token: w.mate.token })
    ).text();
    expect(context).toContain('clock skews by over five minutes');
    expect(context).not.toContain('clock skews by more than five minutes');
    const search = (await (
      await call(
        `/api/search?q=${encodeURIComponent('clock skews five minutes')}&project=${encodeURIComponent(w.project)}`,
        { token: w.mate.token },
      )
    ).json()) as { results: { id: number }[] };
    const found = search.results.map((r) => r.id);
    expect(found).toContain(newer);
    expect(found).not.toContain(older);

    // Visible to admins, and undone exactly.
    const list = (await (await call('/api/admin/merges', { token: w.owner.token })).json()) as {
      merges: { id: number; sources: number[]; undoable: boolean }[];
    };
    expect(list.merges.find((m) => m.id === newer)).toMatchObject({ sources: [older], undoable: true });
    expect((await call('/api/admin/merges', { token: w.mate.token })).status).toBe(403);
    const undo = await call(`/api/admin/merges/${newer}/undo`, { token: w.owner.token, method: 'POST' });
    expect(await undo.json()).toEqual({ id: newer, restored: [older] });
    // Every column as it was (embedded_at aside: the search above may have embedded rows meanwhile).
    const { embedded_at: _e1, ...now } = (await rowOf(older))!;
    const { embedded_at: _e2, ...then } = before!;
    expect(now).toEqual(then);
    const again = await call(`/api/admin/merges/${newer}/undo`, { token: w.owner.token, method: 'POST' });
    expect(again.status).toBe(404);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('not_merged');
    const restored = await (
      await call(`/api/context?project=${encodeURIComponent(w.project)}`, { token: w.mate.token })
    ).text();
    expect(restored).toContain('clock skews by more than five minutes');
  });

  it('compares file lists and concepts as sets: the same files in another order or repeated still merge, a different set does not', async () => {
    const w = await world();
    const files = {
      filesRead: ['src/auth/clock.ts', 'src/auth/verify.ts'],
      filesModified: ['src/auth/verify.ts', 'test/auth/verify.test.ts'],
      concepts: ['gotcha', 'problem-solution'],
    };
    const a = await seedObservation(w.ids, w.projectId, w.session, {
      ...skew('by more than'),
      ...files,
      createdAt: 1_000,
    });
    const b = await seedObservation(w.ids, w.projectId, w.session, {
      ...skew('by over'),
      filesRead: ['src/auth/verify.ts', 'src/auth/clock.ts', 'src/auth/clock.ts'],
      filesModified: ['test/auth/verify.test.ts', 'src/auth/verify.ts'],
      concepts: ['problem-solution', 'gotcha'],
      createdAt: 2_000,
    });
    const fewer = await seedObservation(w.ids, w.projectId, w.session, {
      ...skew('by nearly'),
      ...files,
      filesModified: ['src/auth/verify.ts'],
      createdAt: 3_000,
    });
    const out = await run(w);
    expect(out.result).toMatchObject({ clusters: 1, merged: 1 });
    expect(await mergedInto(a)).toBe(b);
    for (const id of [b, fewer]) expect(await mergedInto(id)).toBeNull();
  });

  it('refuses an undo after seven days and answers 400 to a bad id', async () => {
    const w = await world();
    const a = await seedObservation(w.ids, w.projectId, w.session, { ...skew('by more than'), createdAt: 1_000 });
    const b = await seedObservation(w.ids, w.projectId, w.session, { ...skew('by over'), createdAt: 2_000 });
    await run(w);
    expect(await mergedInto(a)).toBe(b);
    await env.DB.prepare(
      "UPDATE observation_events SET created_at = created_at - 8 * 86400000 WHERE observation_id = ? AND action = 'merge'",
    )
      .bind(a)
      .run();
    const late = await call(`/api/admin/merges/${b}/undo`, { token: w.owner.token, method: 'POST' });
    expect(late.status).toBe(409);
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe('undo_expired');
    expect(await mergedInto(a)).toBe(b);
    const bad = await call('/api/admin/merges/abc/undo', { token: w.owner.token, method: 'POST' });
    expect(bad.status).toBe(400);
  });

  it('forgets the merged sources for good with the record that stands for them, and a source alone', async () => {
    const w = await world();
    const a = await seedObservation(w.ids, w.projectId, w.session, { ...skew('by more than'), createdAt: 1_000 });
    const b = await seedObservation(w.ids, w.projectId, w.session, { ...skew('by over'), createdAt: 2_000 });
    const c = await seedObservation(w.ids, w.projectId, w.session, { ...skew('by at least'), createdAt: 3_000 });
    await run(w);
    expect([await mergedInto(a), await mergedInto(b)]).toEqual([c, c]);

    const one = await call('/api/forget', { token: w.owner.token, json: { kind: 'observation', id: a } });
    expect(one.status).toBe(200);
    expect(await rowOf(a)).toBeNull();
    expect(await mergedInto(b)).toBe(c);

    const all = await call('/api/forget', { token: w.owner.token, json: { kind: 'observation', id: c } });
    expect(all.status).toBe(200);
    for (const id of [a, b, c]) expect(await rowOf(id)).toBeNull();
    const left = await env.DB.prepare('SELECT count(*) AS n FROM observation_events WHERE observation_id IN (?, ?, ?)')
      .bind(a, b, c)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
  });

  it('keeps every step of a run within the job step budget of D1 statements', async () => {
    const w = await world();
    const groups = 12;
    for (let g = 0; g < groups; g++) {
      const file = `src/mod${g}.ts`;
      await seedObservation(w.ids, w.projectId, w.session, {
        ...skew('by more than'),
        filesModified: [file],
        createdAt: 1_000 + g,
      });
      await seedObservation(w.ids, w.projectId, w.session, {
        ...skew('by over'),
        filesModified: [file],
        createdAt: 2_000 + g,
      });
    }
    const steps: Usage[] = [];
    const stop = watchInvocations((u) => {
      if (u.label === 'job consolidate-project') steps.push(u);
    });
    try {
      // A small step budget (as on Workers Free) so the run takes several steps.
      const out = await run(w, { ...env, JOB_STEP_STATEMENTS: '80' });
      expect(out.result).toMatchObject({ clusters: groups, merged: groups });
    } finally {
      stop();
    }
    expect(steps.length).toBeGreaterThan(1);
    for (const s of steps) expect(s.statements).toBeLessThanOrEqual(80);
    const merged = await env.DB.prepare(
      'SELECT count(*) AS n FROM observations WHERE project_id = ? AND merged_into IS NOT NULL',
    )
      .bind(w.projectId)
      .first<{ n: number }>();
    expect(merged?.n).toBe(groups);
  });

  it("is started by the team's daily job for each project that got observations that day", async () => {
    const w = await world();
    const a = await seedObservation(w.ids, w.projectId, w.session, {
      ...skew('by more than'),
      createdAt: Date.now() - 60_000,
    });
    const b = await seedObservation(w.ids, w.projectId, w.session, { ...skew('by over'), createdAt: Date.now() });
    const day = await runTeamDay(w.ids.teamId);
    expect(day.result).toMatchObject({ consolidate: 1 });
    expect((await listJobs(env, w.ids.teamId, 20, 'consolidate-project')).length).toBe(1);
    await runOpenJobs(w.ids.teamId, 'consolidate-project');
    expect(await mergedInto(a)).toBe(b);
  });
});
