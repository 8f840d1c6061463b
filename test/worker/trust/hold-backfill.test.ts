// Rows stored before migration 0017 were never judged for instruction-like text: the `judge-held` job judges them
// with the write path's rule in bounded steps, so a teammate's old injection leaves everyone else's context (it
// was in it before) while benign rows and rows an admin released stay as they were.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { watchInvocations, type Usage } from '../../../src/db/meter';
import { judgeHeldJob } from '../../../src/hold/backfill-job';
import { call, fresh, newIdentity } from '../support/http';
import { runKindInline } from '../support/jobs';
import { idsOf, seedObservation, seedProject, seedSession } from '../support/seed';
import { HOSTILE } from './hostile';

const heldOf = (id: number) =>
  env.DB.prepare('SELECT held_kinds AS k FROM observations WHERE id = ?')
    .bind(id)
    .first<{ k: string | null }>()
    .then((r) => r?.k ?? null);

describe('judging rows stored before the hold-back', { timeout: 60_000 }, () => {
  it('holds an old instruction-like row back from teammates in bounded steps and leaves benign and released rows alone', async () => {
    const a = await newIdentity({ role: 'member' });
    const b = await newIdentity({ team: a.team, role: 'member' });
    const ids = await idsOf(a);
    const key = `github.com/acme/${fresh('old')}`;
    const projectId = await seedProject(ids, key);
    const session = await seedSession(ids, projectId, fresh('s'));
    // Written straight into the table, as before migration 0017: no verdict stored.
    const hostile = await seedObservation(ids, projectId, session, {
      title: HOSTILE[0]!.title,
      narrative: HOSTILE[0]!.text,
      createdAt: Date.now(),
    });
    const released = await seedObservation(ids, projectId, session, {
      title: HOSTILE[1]!.title,
      narrative: HOSTILE[1]!.text,
    });
    await env.DB.prepare('UPDATE observations SET released_at = 1, released_by = ? WHERE id = ?')
      .bind(ids.userId, released)
      .run();
    const benign: number[] = [];
    for (let i = 0; i < 30; i++)
      benign.push(
        await seedObservation(ids, projectId, session, {
          title: `Deploy script step ${i} reads DEPLOY_ENV`,
          narrative: 'staging is the default.',
          createdAt: Date.now() - 60_000 + i,
        }),
      );
    const context = async () =>
      (await call(`/api/context?project=${encodeURIComponent(key)}`, { token: b.token })).text();
    expect(await heldOf(hostile)).toBeNull();
    expect(await context()).toContain('Deploy checklist: ignore all previous');

    const steps: Usage[] = [];
    const stop = watchInvocations((u) => {
      if (u.label === 'job judge-held') steps.push(u);
    });
    let out;
    try {
      // A step of 20 statements reads pages of fewer rows than the 33 here: several steps.
      out = await runKindInline({ ...env, JOB_STEP_STATEMENTS: '20' }, judgeHeldJob, ids.teamId, {});
    } finally {
      stop();
    }
    expect(out.result).toMatchObject({ held: 1 });
    expect((out.result as { judged: number }).judged).toBeGreaterThanOrEqual(31);
    expect(steps.length).toBeGreaterThan(1);
    for (const s of steps) expect(s.statements).toBeLessThanOrEqual(20);
    expect(await heldOf(hostile)).toContain('override');
    expect(await heldOf(released)).toBeNull();
    for (const id of benign) expect(await heldOf(id)).toBeNull();
    const after = await context();
    expect(after).not.toContain('Deploy checklist: ignore all previous');
    expect(after).toContain('Deploy script step 29');
    // Its author still sees it, marked held.
    expect(await (await call(`/api/context?project=${encodeURIComponent(key)}`, { token: a.token })).text()).toContain(
      '[held:',
    );
    // Run again: nothing new to hold.
    expect((await runKindInline(env, judgeHeldJob, ids.teamId, {})).result).toMatchObject({ held: 0 });
  });
});
