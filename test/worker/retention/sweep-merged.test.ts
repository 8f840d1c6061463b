// Retention and consolidation together: a record that stands for near-duplicates (merged_into) can pass the
// team's retention_days while a newer duplicate merged into it later is still within it. The sweep forgets what is
// older than the cutoff — the survivor and its older sources, read from every D1 table, FTS and local vectors — and
// puts the newer source back (merged_into cleared, an `unmerge` event), so nothing the team keeps stays hidden
// behind a record that no longer exists.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { consolidateJob } from '../../../src/consolidation/job';
import { startTeamRetention } from '../../../src/retention/sweep';
import { indexObservations } from '../../../src/vectors/index-records';
import { call, fresh, newIdentity } from '../support/http';
import { runKindInline, runOpenJobs } from '../support/jobs';
import { idsOf, seedObservation, seedProject, seedSession, type SeedObservation } from '../support/seed';
import { d1Holding, expectForgotten, secretWord } from '../support/storage-scan';

const DAY = 86_400_000;

const skew = (word: string): SeedObservation => ({
  type: 'bugfix',
  title: 'Token refresh fails when the clock skews five minutes',
  narrative: `The check in verifyToken compares exp against Date.now() without leeway, so a laptop whose clock runs five minutes fast gets 401 on every refresh. Seen as ${word}.`,
  facts: ['verifyToken has no clock leeway', 'refresh returns 401 on skewed clocks'],
  concepts: ['gotcha'],
  filesModified: ['src/auth/verify.ts'],
});

const row = (id: number) =>
  env.DB.prepare('SELECT merged_into FROM observations WHERE id = ?')
    .bind(id)
    .first<{ merged_into: number | null }>()
    .then((r) => (r ? r.merged_into : 'gone'));
const vectors = (id: number) =>
  env.DB.prepare("SELECT count(*) AS n FROM local_vectors WHERE kind = 'observation' AND record_id = ?")
    .bind(id)
    .first<{ n: number }>()
    .then((r) => r?.n ?? 0);

describe('retention sweep of merged records', { timeout: 90_000 }, () => {
  it('forgets an expired survivor with its expired sources and puts back a newer source merged into it', async () => {
    const owner = await newIdentity({ role: 'owner' });
    const mate = await newIdentity({ team: owner.team, role: 'member' });
    const ids = await idsOf(owner);
    const project = `github.com/acme/${fresh('repo')}`;
    const projectId = await seedProject(ids, project);
    const session = await seedSession(ids, projectId, fresh('s'));
    const now = Date.now();
    const [oldestWord, survivorWord, newWord] = [secretWord(), secretWord(), secretWord()];
    const oldest = await seedObservation(ids, projectId, session, { ...skew(oldestWord), createdAt: now - 45 * DAY });
    const survivor = await seedObservation(ids, projectId, session, {
      ...skew(survivorWord),
      createdAt: now - 40 * DAY,
    });
    const consolidate = () => runKindInline(env, consolidateJob, ids.teamId, { projectId }, ids.userId);
    await consolidate();
    expect(await row(oldest)).toBe(survivor);
    // A newer duplicate joins the record that already stands for others: it stays the survivor.
    const newer = await seedObservation(ids, projectId, session, { ...skew(newWord), createdAt: now - 2 * DAY });
    await consolidate();
    expect(await row(newer)).toBe(survivor);
    await indexObservations(env, ids.teamId, [oldest, survivor, newer]);
    expect(await vectors(newer)).toBeGreaterThan(0);

    expect(
      (await call('/api/admin/settings', { token: owner.token, method: 'PATCH', json: { retention_days: 30 } })).status,
    ).toBe(200);
    const started = await startTeamRetention(env, ids.teamId, JSON.stringify({ retention_days: 30 }), now);
    const [sweep] = (await runOpenJobs(ids.teamId, 'retention-sweep')).filter((j) => j.id === started);
    expect(sweep?.result).toMatchObject({ observations: 2, restored: 1 });

    // What passed the retention period is gone from every table, the FTS index and the local vectors.
    await expectForgotten(oldestWord);
    await expectForgotten(survivorWord);
    expect([await row(oldest), await row(survivor)]).toEqual(['gone', 'gone']);
    expect([await vectors(oldest), await vectors(survivor)]).toEqual([0, 0]);

    // The newer source is a record of its own again, with its history saying why.
    expect(await row(newer)).toBeNull();
    expect(await d1Holding(newWord)).toEqual(
      expect.arrayContaining(['observations.narrative', 'observations_fts MATCH']),
    );
    expect(await vectors(newer)).toBeGreaterThan(0);
    const events = await env.DB.prepare(
      'SELECT action, actor, by_observation_id AS by FROM observation_events WHERE observation_id = ? ORDER BY id',
    )
      .bind(newer)
      .all();
    expect(events.results).toEqual([
      { action: 'merge', actor: 'consolidation', by: survivor },
      { action: 'unmerge', actor: 'retention', by: survivor },
    ]);
    const found = (await (
      await call(`/api/search?q=${encodeURIComponent(newWord)}&project=${encodeURIComponent(project)}`, {
        token: mate.token,
      })
    ).json()) as { results: { id: number }[] };
    expect(found.results.map((r) => r.id)).toEqual([newer]);
    const audit = await env.DB.prepare("SELECT detail FROM audit_log WHERE team_id = ? AND action = 'retention.sweep'")
      .bind(ids.teamId)
      .first<{ detail: string }>();
    expect(JSON.parse(audit!.detail)).toMatchObject({ observations: 2, restored: 1 });
  });
});
