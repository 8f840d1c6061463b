// Upgrading from an older version needs no hand work: a database made by an install from before migration 0007
// (observations embedded one vector each, no vectors for facts, summaries or prompts) gets the newer migrations,
// and the first request the new code serves starts the upgrade job, which starts the team's embed job; every
// record and token is kept, every record ends with its vectors (in several steps, each within the step budget),
// and the version is recorded so nothing starts twice.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { configOf } from '../../../src/config';
import { EMBED_CHUNK_TEXTS } from '../../../src/vectors/index-records';
import { dataVersion } from '../../../src/db/maintenance';
import { countUnembedded } from '../../../src/db/vectors';
import { forgetUpgradeCheck } from '../../../src/upgrade/check';
import { DATA_VERSION } from '../../../src/upgrade/versions';
import type { WireJob } from '../../../src/shared/jobs';
import { resetDatabases } from '../support/fresh-db';
import worker from '../../../src/index';
import { BASE, call, newIdentity } from '../support/http';
import { jobOf, lane } from '../support/jobs';
import { isFinished } from '../../../src/shared/jobs';
import { idsOf, seedObservation, seedProject, seedSession, seedSummary } from '../support/seed';
import { jobRecord, type JobRecord } from '../../../src/jobs/job-do';

/** Migrations of the older install: 0001–0006 (before 0007_vector_parts). */
const OLD = 6;
/** Older observations beyond the two named ones. */
const MANY = 800;

async function jobsOf(teamId: number | null, kind: string): Promise<WireJob[]> {
  return (await lane(teamId).list(50, kind)).map(jobRecord);
}

/** The upgrade job the request's background check queued (it runs in waitUntil, after the answer). */
async function queuedUpgrade(): Promise<WireJob> {
  for (let i = 0; i < 400; i++) {
    const [job] = await jobsOf(null, 'upgrade');
    if (job) return job;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('no upgrade job was started');
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

describe('upgrading an older database', { timeout: 60_000 }, () => {
  it('runs what the new version needs by itself and keeps every record and token', async () => {
    await resetDatabases(OLD);
    expect(env.TEST_MIGRATIONS[OLD - 1]!.name).toMatch(/^0006_/);
    const owner = await newIdentity();
    const ids = await idsOf(owner);
    const key = 'github.com/acme/old-install';
    const projectId = await seedProject(ids, key);
    const sessionId = await seedSession(ids, projectId, 'old-session');
    const withFacts = await seedObservation(ids, projectId, sessionId, {
      title: 'Cache keys include the locale',
      narrative: 'The cache missed the locale.',
      facts: ['cache keys include locale', 'the CDN varies on Accept-Language'],
    });
    const plain = await seedObservation(ids, projectId, sessionId, {
      title: 'Router stays server-side',
      narrative: 'Negotiation stays on the server.',
    });
    await seedSummary(ids, projectId, sessionId, {
      request: 'Fix the cache bug',
      learned: 'Locale was missing',
      completed: 'Fixed',
    });
    await env.DB.prepare(
      'INSERT INTO prompts (team_id, project_id, session_id, prompt_number, text, author_user_id, created_at) VALUES (?, ?, ?, 1, ?, ?, ?)',
    )
      .bind(ids.teamId, projectId, sessionId, 'please fix the cache', ids.userId, Date.now())
      .run();
    // The old install had embedded both observations, one vector each, in its own local_vectors shape.
    const blob = new Uint8Array(new Float32Array(8).fill(0.5).buffer);
    for (const id of [withFacts, plain]) {
      await env.DB.prepare('UPDATE observations SET embedded_at = ? WHERE id = ?').bind(Date.now(), id).run();
      await env.DB.prepare(
        "INSERT INTO local_vectors (observation_id, team_id, project_id, type, embedding) VALUES (?, ?, ?, 'discovery', ?)",
      )
        .bind(id, ids.teamId, projectId, blob)
        .run();
    }
    // Enough older records that the backfill takes several steps (3 texts each: 2,400 texts, chunks of <= 100),
    // written by one bounded insert.
    await env.DB.prepare(
      `WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?1)
       INSERT INTO observations (team_id, project_id, session_id, prompt_number, type, title, narrative, facts, concepts, files_read,
          files_modified, created_at, stored_at, discovery_tokens, content_hash, author_user_id, device_id)
       SELECT ?2, ?3, ?4, 1, 'discovery', 'Older note ' || i, 'What was learned in step ' || i, json_array('fact a' || i, 'fact b' || i),
          '[]', '[]', '[]', 1000 + i, 1000 + i, 0, 'older-' || i, ?5, ?6 FROM k`,
    )
      .bind(MANY, ids.teamId, projectId, sessionId, ids.userId, ids.deviceId)
      .run();
    const counts = async () =>
      env.DB.prepare(
        'SELECT (SELECT COUNT(*) FROM observations) AS o, (SELECT COUNT(*) FROM summaries) AS s, (SELECT COUNT(*) FROM prompts) AS p, (SELECT COUNT(*) FROM tokens) AS t',
      ).first();
    const before = await counts();
    expect(before).toEqual({ o: 2 + MANY, s: 1, p: 1, t: 1 });

    // The new version is deployed: its migrations first (as npm run deploy does), then its first request.
    const { applyD1Migrations } = await import('cloudflare:test');
    await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
    await applyD1Migrations(env.DB_1, env.TEST_MIGRATIONS);
    for (const [kind, n] of [
      ['observation', 1 + MANY],
      ['summary', 1],
      ['prompt', 1],
    ] as const)
      expect(await countUnembedded(env.DB, ids.teamId, kind), kind).toBe(n);
    // The Worker's own fetch, called directly: the isolate is shared with other test files, whose requests have
    // checked already, so the check is forgotten right before (a new deployment's isolate starts without one).
    forgetUpgradeCheck();
    const waits: Promise<unknown>[] = [];
    const ctx = {
      waitUntil: (p: Promise<unknown>) => void waits.push(p),
      passThroughOnException: () => undefined,
      props: {},
    } as unknown as ExecutionContext;
    const first = await worker.fetch(
      new Request(`${BASE}/api/search?q=locale&project=${encodeURIComponent(key)}`, {
        headers: { authorization: `Bearer ${owner.token}` },
      }),
      env,
      ctx,
    );
    expect(first.status).toBe(200);
    await Promise.all(waits);

    // Scheduled: the lanes' own alarms run both jobs to their end; nothing steps them here.
    const upgrade = await byItself(null, (await queuedUpgrade()).id);
    expect(upgrade).toMatchObject({ status: 'done', result: { version: DATA_VERSION, from: 0, embedding: 1 } });
    expect(upgrade.result).toMatchObject({ teams: expect.any(Number) });
    const budget = configOf(env).jobStep;
    expect(upgrade.stats.statements.max).toBeLessThanOrEqual(budget.statements);
    const [embed] = await jobsOf(ids.teamId, 'embed');
    expect(embed).toBeDefined();
    const backfill = await byItself(ids.teamId, embed!.id);
    expect(backfill.status).toBe('done');
    // In bounded steps: several of them, each within the statement budget, holding at most one chunk of vectors.
    expect(backfill.stats.steps).toBeGreaterThan(1);
    expect(backfill.stats.statements.max).toBeLessThanOrEqual(budget.statements);
    expect(backfill.stats.held.max).toBeGreaterThan(0);
    expect(backfill.stats.held.max).toBeLessThanOrEqual(EMBED_CHUNK_TEXTS * 1024 * 8);

    expect(await counts()).toEqual(before);
    for (const kind of ['observation', 'summary', 'prompt'] as const)
      expect(await countUnembedded(env.DB, ids.teamId, kind), kind).toBe(0);
    const parts = await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM local_vectors WHERE kind = 'observation' AND record_id = ? AND part > 0",
    )
      .bind(withFacts)
      .first<{ n: number }>();
    expect(parts?.n).toBe(2);
    expect(await dataVersion(env.DB)).toBe(DATA_VERSION);

    // The old token still reads the old memory, and later requests start nothing more.
    const res = await call(
      `/api/search?q=${encodeURIComponent('CDN Accept-Language')}&project=${encodeURIComponent(key)}`,
      { token: owner.token },
    );
    expect(((await res.json()) as { results: { title: string }[] }).results.map((r) => r.title)).toContain(
      'Cache keys include the locale',
    );
    await call('/api/health');
    expect(await jobsOf(null, 'upgrade')).toHaveLength(1);
  });
});
