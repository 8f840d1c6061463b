// Backup → restore carries the correction history (issue 27): a team with superseded, merged, flagged and
// outdated records, backed up in small parts and restored into a fresh deployment (other ids), reads the same to
// a third member (context index and search), with the same links, event rows and signals; a second restore of
// the same backup adds no event row.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { WireJob } from '../../../src/shared/jobs';
import { resetDatabases } from '../support/fresh-db';
import { expectCorrected, historyOf, seedCorrections, truthOf } from '../support/history';
import { ADMIN_SECRET, call, fresh, newIdentity } from '../support/http';
import { runJob } from '../support/jobs';
import { seedWorld } from '../support/seed';

const T0 = Date.parse('2026-05-04T09:00:00Z');
const operator = (path: string, json: unknown) => call(path, { token: ADMIN_SECRET, method: 'POST', json });
const jobOf = async (res: Response) => {
  expect(res.status, await res.clone().text()).toBe(202);
  return ((await res.json()) as { job: WireJob }).job;
};

describe('backup and restore of the correction history', { timeout: 90_000 }, () => {
  it('shows a third member of the restored team the same context, search and history rows', async () => {
    const w = await seedWorld();
    const c = await seedCorrections(w);
    const mate = await newIdentity({ team: w.id.team, role: 'member' });
    const before = await truthOf(mate.token, w.key, c.word);
    expectCorrected(before, c);
    const historyBefore = await historyOf(env.DB, w.ids.teamId);
    expect(historyBefore.links.length).toBe(3);

    const backup = await runJob(
      w.ids.teamId,
      (
        await jobOf(
          await call('/api/admin/jobs', { token: w.id.token, json: { kind: 'backup', params: { partBytes: 1_000 } } }),
        )
      ).id,
    );
    expect(backup.status).toBe('done');
    const name = (backup.result as { backup: string }).backup;

    await resetDatabases();
    await env.DB.prepare("INSERT INTO teams (id, slug, name, created_at) VALUES (?, 'another-team', 'another-team', ?)")
      .bind(w.ids.teamId + 1_000, T0)
      .run();
    const restoreJob = await jobOf(await operator(`/api/admin/teams/${w.id.team}/restore`, { backup: name }));
    const teamId = (await env.DB.prepare('SELECT id FROM teams WHERE slug = ?')
      .bind(w.id.team)
      .first<{ id: number }>())!.id;
    expect(teamId).not.toBe(w.ids.teamId);
    const restored = await runJob(teamId, restoreJob.id);
    expect(restored.status).toBe('done');
    expect((await runJob(teamId, (restored.result as { embed_job: string }).embed_job)).status).toBe('done');

    const history = await historyOf(env.DB, teamId);
    expect(history).toEqual(historyBefore);
    const login = await operator('/api/admin/teams', { team: w.id.team, user: mate.user, device: fresh('dev') });
    expect(login.status).toBe(201);
    const { token } = (await login.json()) as { token: string };
    expect(await truthOf(token, w.key, c.word)).toEqual(before);

    const again = await runJob(
      teamId,
      (await jobOf(await operator(`/api/admin/teams/${w.id.team}/restore`, { backup: name }))).id,
    );
    expect(again.status).toBe('done');
    expect(await historyOf(env.DB, teamId)).toEqual(historyBefore);
  });
});
