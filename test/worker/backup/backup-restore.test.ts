// Backups that restore: the backup job writes a team's memory into R2 (miniflare's local R2, the BACKUPS binding)
// in bounded steps; the databases are then emptied and migrated again (a fresh deployment), the operator restores
// the backup, and the team's search results and context index read as before. (Stamps and pruning: backup-stamps.test.ts.)
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { storePrompt } from '../../../src/store/sessions';
import { manifestKey, partKey } from '../../../src/backup/store';
import { startDailyMaintenance } from '../../../src/maintenance/daily';
import { ADMIN_SECRET, call, fresh, newIdentity } from '../support/http';
import { comparableContext } from '../support/comparable';
import { resetDatabases } from '../support/fresh-db';
import { finishJob, runJob, runOpenJobs } from '../support/jobs';
import { idsOf, seedObservation, seedProject, seedSession, seedWorld } from '../support/seed';
import type { WireJob } from '../../../src/shared/jobs';

const T0 = Date.parse('2026-05-04T09:00:00Z');
const bucket = () => env.BACKUPS;

async function operator(path: string, json?: unknown, method = json === undefined ? 'GET' : 'POST') {
  return call(path, { token: ADMIN_SECRET, method, json });
}

async function startBackup(team: string, teamId: number): Promise<WireJob> {
  const res = await operator(`/api/admin/teams/${team}/backups`, {});
  expect(res.status).toBe(202);
  const { job } = (await res.json()) as { job: WireJob };
  return (await runJob(teamId, job.id)) as WireJob;
}

describe('backups', { timeout: 60_000 }, () => {
  it('restore into a fresh deployment with the same search results and context index', async () => {
    const w = await seedWorld();
    const word = `bak${Math.random().toString(36).slice(2, 8)}`;
    const mate = await newIdentity({ team: w.id.team, role: 'member' });
    const mateIds = await idsOf(mate);
    await w.add({
      type: 'bugfix',
      title: `Fixed the ${word} cache key`,
      narrative: `The ${word} cache key missed the locale.`,
      facts: [`${word} keys include locale`],
      filesModified: ['src/cache.ts'],
      createdAt: T0,
    });
    await w.add({
      type: 'decision',
      title: `Keep ${word} server-side`,
      narrative: 'Negotiation stays on the server.',
      filesRead: ['src/router.ts'],
      createdAt: T0 + 60_000,
    });
    // Both records cite their files with evidence ids (issue 34): a restore keeps them (`file_ids`).
    await env.DB.prepare(
      "UPDATE observation_files SET blob = ?, ws = ?, base = CASE kind WHEN 'modified' THEN ? END WHERE team_id = ? AND path IN ('src/cache.ts', 'src/router.ts')",
    )
      .bind('a'.repeat(40), '1'.repeat(16), 'c'.repeat(40), w.ids.teamId)
      .run();
    const evidence = async (teamId: number) =>
      (
        await env.DB.prepare(
          `SELECT o.title, f.path, f.kind, f.blob, f.ws, f.base FROM observation_files f
             JOIN observations o ON o.id = f.observation_id WHERE f.team_id = ? AND f.blob IS NOT NULL
            ORDER BY o.title, f.path, f.kind`,
        )
          .bind(teamId)
          .all()
      ).results;
    const evidenceBefore = await evidence(w.ids.teamId);
    expect(evidenceBefore.length).toBeGreaterThanOrEqual(2);
    await w.add({
      type: 'discovery',
      title: `The mate found ${word} retries`,
      narrative: 'Retries double on timeouts.',
      authorUserId: mateIds.userId,
      createdAt: T0 + 90_000,
    });
    for (let i = 0; i < 30; i++)
      await w.add({
        type: 'change',
        title: `Step ${i} of the ${word} rollout`,
        narrative: `Rollout step ${i} moved traffic.`,
        createdAt: T0 + 100_000 + i * 1_000,
      });
    await w.summary({
      request: `Fix the ${word} bug`,
      learned: 'Locale was missing',
      completed: 'Fixed',
      createdAt: T0 + 200_000,
    });
    await storePrompt(env.DB, {
      teamId: w.ids.teamId,
      projectId: w.projectId,
      sessionDbId: w.sessionId,
      promptNumber: 1,
      promptId: 'p-1',
      text: `please fix ${word}`,
      authorUserId: w.ids.userId,
      createdAt: T0 - 1_000,
    });
    // The mate's private project: a restore brings it back as theirs, unreadable to the owner.
    const privateKey = `github.com/mate/${fresh('secret')}`;
    const priv = await seedProject(mateIds, privateKey, 'private');
    await seedObservation(mateIds, priv, await seedSession(mateIds, priv, fresh('s')), {
      title: `Private ${word} notes`,
      createdAt: T0,
    });
    const embed = await call('/api/admin/jobs', { token: w.id.token, json: { kind: 'embed' } });
    await runJob(w.ids.teamId, ((await embed.json()) as { job: WireJob }).job.id);

    const titles = async (token: string, q: string) =>
      (
        (await (
          await call(`/api/search?q=${encodeURIComponent(q)}&project=${encodeURIComponent(w.key)}`, { token })
        ).json()) as { results: { title: string }[] }
      ).results.map((r) => r.title);
    const context = async (token: string) =>
      comparableContext(
        await (await call(`/api/context?project=${encodeURIComponent(w.key)}&tz=UTC`, { token })).text(),
      );
    const queries = [word, 'locale', 'server', 'retries', 'rollout traffic'];
    const before = { search: [] as string[][], context: await context(w.id.token) };
    for (const q of queries) before.search.push(await titles(w.id.token, q));
    expect(before.search[0]!.length).toBeGreaterThan(2);
    expect(before.context).toContain(`Fixed the ${word} cache key`);

    // Small parts: the backup takes many steps, one part each.
    const res = await call('/api/admin/jobs', {
      token: w.id.token,
      json: { kind: 'backup', params: { partBytes: 2_000 } },
    });
    expect(res.status).toBe(202);
    const job = (await runJob(w.ids.teamId, ((await res.json()) as { job: WireJob }).job.id)) as WireJob;
    expect(job.status).toBe('done');
    const result = job.result as { backup: string; parts: number; records: Record<string, number> };
    expect(result.records).toEqual({ user: 2, project: 2, session: 2, prompt: 1, observation: 34, summary: 1 });
    expect(result.parts).toBeGreaterThan(3);
    expect(job.stats.steps).toBeGreaterThanOrEqual(result.parts);
    expect(job.stats.statements.max).toBeLessThanOrEqual(job.stats.budget.statements);
    const head = await bucket().head(manifestKey(result.backup));
    expect(head).not.toBeNull();
    const firstPart = await (await bucket().get(partKey(result.backup, 1)))!.text();
    expect(firstPart).not.toContain(w.id.token);
    const listed = (await (await operator(`/api/admin/teams/${w.id.team}/backups`)).json()) as {
      backups: { name: string; complete: boolean }[];
    };
    expect(listed.backups[0]).toMatchObject({ name: result.backup, complete: true });

    // A fresh deployment: empty, migrated databases; only the bucket is left. A team made before the restore
    // gives the restored team another id than it had.
    await resetDatabases();
    await env.DB.prepare("INSERT INTO teams (id, slug, name, created_at) VALUES (?, 'another-team', 'another-team', ?)")
      .bind(w.ids.teamId + 1_000, T0)
      .run();
    const restore = await operator(`/api/admin/teams/${w.id.team}/restore`, { backup: result.backup });
    expect(restore.status).toBe(202);
    const started = (await restore.json()) as { created: boolean; job: WireJob };
    expect(started.created).toBe(true);
    const newTeamId = (await env.DB.prepare('SELECT id FROM teams WHERE slug = ?')
      .bind(w.id.team)
      .first<{ id: number }>())!.id;
    expect(newTeamId).not.toBe(w.ids.teamId);
    const restored = await runJob(newTeamId, started.job.id);
    expect(restored.status).toBe('done');
    expect(restored.result).toMatchObject({
      records: 42,
      imported: { users: 2, projects: 2, sessions: 2, prompts: 1, observations: 34, summaries: 1 },
    });
    expect(await evidence(newTeamId)).toEqual(evidenceBefore);
    const embedAfter = await runJob(newTeamId, (restored.result as { embed_job: string }).embed_job);
    expect(embedAfter.status).toBe('done');

    // The owner logs in again on the new deployment (tokens are never in a backup).
    const again = await operator('/api/admin/teams', { team: w.id.team, user: w.id.user, device: fresh('dev') });
    expect(again.status).toBe(201);
    const { token, role } = (await again.json()) as { token: string; role: string };
    expect(role).toBe('owner');
    for (const [i, q] of queries.entries()) expect(await titles(token, q), q).toEqual(before.search[i]);
    expect(await context(token)).toEqual(before.context);
    const owners = await env.DB.prepare(
      'SELECT p.visibility, u.handle FROM projects p JOIN users u ON u.id = p.owner_user_id WHERE p.team_id = ? AND p.key = ?',
    )
      .bind(newTeamId, privateKey)
      .first();
    expect(owners).toEqual({ visibility: 'private', handle: mate.user });
    expect(await titles(token, 'Private')).not.toContain(`Private ${word} notes`);

    // A second restore of the same backup adds nothing.
    const twice = await operator(`/api/admin/teams/${w.id.team}/restore`, { backup: result.backup });
    const second = await runJob(newTeamId, ((await twice.json()) as { job: WireJob }).job.id);
    expect(second.result).toMatchObject({
      imported: { users: 0, projects: 0, sessions: 0, prompts: 0, observations: 0, summaries: 0 },
    });
  });

  it("starts every team's backup from the daily cron when the bucket is bound", async () => {
    const w = await seedWorld();
    await w.add({ title: 'Cron backup note' });
    const now = Date.parse('2026-12-01T03:17:00Z');
    // The cron starts the dispatcher, which starts each team's daily job, which starts the team's backup (this
    // runtime is the file's own: the dispatcher walks only its teams).
    const dispatcher = await startDailyMaintenance(env, now);
    expect((await finishJob(null, dispatcher!)).status).toBe('done');
    await runOpenJobs(w.ids.teamId, 'daily-team');
    const jobs = (await (await call('/api/admin/jobs?kind=backup', { token: w.id.token })).json()) as {
      jobs: WireJob[];
    };
    expect(jobs.jobs).toHaveLength(1);
    const done = await runJob(w.ids.teamId, jobs.jobs[0]!.id);
    expect(done.result).toMatchObject({ backup: `${w.id.team}/2026-12-01T03-17-00Z`, records: { observation: 1 } });
  });

  it('answers a restore of a backup that does not exist with a failed job, and bad names with 400', async () => {
    const team = fresh('t');
    expect((await operator(`/api/admin/teams/${team}/restore`, { backup: '../../etc' })).status).toBe(400);
    expect(
      (await call(`/api/admin/teams/${team}/restore`, { json: { backup: `${team}/2026-11-01T03-17-00Z` } })).status,
    ).toBe(401);
    const res = await operator(`/api/admin/teams/${team}/restore`, { backup: `${team}/2026-11-01T03-17-00Z` });
    expect(res.status).toBe(202);
    const teamId = (await env.DB.prepare('SELECT id FROM teams WHERE slug = ?').bind(team).first<{ id: number }>())!.id;
    const job = await runJob(teamId, ((await res.json()) as { job: WireJob }).job.id);
    expect(job).toMatchObject({ status: 'failed', error: { code: 'backup_not_found' } });
  });
});
