// Upgrading a database from before the hold-back rule (migration 0017): a teammate's old injection was stored
// without a verdict. The new version's first request starts the upgrade job, which starts the team's judge-held
// job; the lanes' own alarms run both, nobody asks, and the row is held from then on — once: later requests start
// nothing more.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { dataVersion, runEnded, runStarted } from '../../../src/db/maintenance';
import { jobRecord, type JobRecord } from '../../../src/jobs/job-do';
import { isFinished, type WireJob } from '../../../src/shared/jobs';
import { forgetUpgradeCheck } from '../../../src/upgrade/check';
import { DATA_VERSION, JUDGE_HELD_VERSION } from '../../../src/upgrade/versions';
import worker from '../../../src/index';
import { resetDatabases } from '../support/fresh-db';
import { BASE, call, fresh, newIdentity } from '../support/http';
import { jobOf, lane } from '../support/jobs';
import { idsOf, seedProject, seedSession } from '../support/seed';
import { HOSTILE } from '../trust/hostile';

/** Migrations of the older install: 0001–0016 (before 0017_held_back). */
const OLD = 16;

const jobsOf = async (teamId: number | null, kind: string): Promise<WireJob[]> =>
  (await lane(teamId).list(50, kind)).map(jobRecord);

async function firstJob(teamId: number | null, kind: string): Promise<WireJob> {
  for (let i = 0; i < 1_000; i++) {
    const [job] = await jobsOf(teamId, kind);
    if (job) return job;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no ${kind} job was started`);
}

/** Waits (polling, bounded) for a job the lane's alarms run by themselves. */
async function byItself(teamId: number | null, id: string): Promise<JobRecord> {
  for (let i = 0; i < 3_000; i++) {
    const job = await jobOf(teamId, id);
    if (job && isFinished(job.status)) return job;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`job ${id} did not finish by itself`);
}

/** A request to the Worker's own fetch, with its background work awaited (the upgrade check runs there). */
async function firstRequest(token: string, path: string): Promise<Response> {
  const waits: Promise<unknown>[] = [];
  const ctx = {
    waitUntil: (p: Promise<unknown>) => void waits.push(p),
    passThroughOnException: () => undefined,
    props: {},
  } as unknown as ExecutionContext;
  const res = await worker.fetch(
    new Request(`${BASE}${path}`, { headers: { authorization: `Bearer ${token}` } }),
    env,
    ctx,
  );
  await Promise.all(waits);
  return res;
}

describe('upgrading a database from before the hold-back rule', { timeout: 90_000 }, () => {
  it("holds a teammate's old injection after the upgrade without an admin starting anything, once", async () => {
    await resetDatabases(OLD);
    expect(env.TEST_MIGRATIONS[OLD - 1]!.name).toMatch(/^0016_/);
    const author = await newIdentity({ role: 'member' });
    const mate = await newIdentity({ team: author.team, role: 'member' });
    const ids = await idsOf(author);
    const key = `github.com/acme/${fresh('old')}`;
    const projectId = await seedProject(ids, key);
    const sessionId = await seedSession(ids, projectId, fresh('s'));
    // Stored by the older version: its observations table has no verdict columns.
    const row = await env.DB.prepare(
      `INSERT INTO observations (team_id, project_id, session_id, prompt_number, type, title, narrative, facts, concepts,
          files_read, files_modified, created_at, stored_at, discovery_tokens, content_hash, author_user_id, device_id)
       VALUES (?1, ?2, ?3, 1, 'discovery', ?4, ?5, '[]', '[]', '[]', '[]', ?6, ?6, 0, ?7, ?8, ?9) RETURNING id`,
    )
      .bind(
        ids.teamId,
        projectId,
        sessionId,
        HOSTILE[0]!.title,
        HOSTILE[0]!.text,
        Date.now(),
        fresh('h'),
        ids.userId,
        ids.deviceId,
      )
      .first<{ id: number }>();
    // The older version had reached data version 1 (its vectors' upgrade).
    await runStarted(env.DB, 'upgrade', 1);
    await runEnded(env.DB, 'upgrade', 2, { detail: { version: 1 } });
    expect(await dataVersion(env.DB)).toBe(1);

    // The new version is deployed: its migrations first (as npm run deploy does), then its first request.
    const { applyD1Migrations } = await import('cloudflare:test');
    await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
    await applyD1Migrations(env.DB_1, env.TEST_MIGRATIONS);
    const heldOf = async () =>
      (await env.DB.prepare('SELECT held_kinds AS k FROM observations WHERE id = ?')
        .bind(row!.id)
        .first<{ k: string | null }>())!.k;
    expect(await heldOf()).toBeNull();
    forgetUpgradeCheck();
    expect((await firstRequest(mate.token, `/api/context?project=${encodeURIComponent(key)}`)).status).toBe(200);

    // The lanes' own alarms run the upgrade and the team's judge-held job; nothing steps them here.
    const upgrade = await byItself(null, (await firstJob(null, 'upgrade')).id);
    expect(DATA_VERSION).toBeGreaterThanOrEqual(JUDGE_HELD_VERSION);
    expect(upgrade).toMatchObject({ status: 'done', result: { version: DATA_VERSION, from: 1, judging: 1 } });
    const judged = await byItself(ids.teamId, (await firstJob(ids.teamId, 'judge-held')).id);
    expect(judged).toMatchObject({ status: 'done', result: { held: 1, judged: 1 } });
    expect(judged.stats.statements.max).toBeLessThanOrEqual(judged.stats.budget.statements);
    expect(await heldOf()).toContain('override');
    const context = await (await call(`/api/context?project=${encodeURIComponent(key)}`, { token: mate.token })).text();
    expect(context).not.toContain('evil.example');
    expect(await dataVersion(env.DB)).toBe(DATA_VERSION);

    // Once: a later isolate's first request finds the version reached and starts nothing.
    forgetUpgradeCheck();
    await firstRequest(mate.token, '/api/health');
    expect(await jobsOf(null, 'upgrade')).toHaveLength(1);
    expect(await jobsOf(ids.teamId, 'judge-held')).toHaveLength(1);
  });
});
