// Paths the meter found past Free's budget (50 subrequests an invocation, D1 statements included), now bounded:
// what one invocation sends no longer grows with the team. Each test fails under the Free profile the worker tests
// run on (test/worker/limits.ts) when the bound is taken away.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { watchInvocations, spent, type Usage } from '../../../src/db/meter';
import { teamStub, WAKE_AT_ONCE } from '../../../src/slots/team-do';
import { judgeHeldJob, PAGE } from '../../../src/hold/backfill-job';
import { call, fresh, newIdentity } from '../support/http';
import { runKindInline } from '../support/jobs';
import { idsOf, seedObservation, seedProject, seedSession } from '../support/seed';
import { HOSTILE } from '../trust/hostile';
import { FREE_SUBREQUESTS } from '../limits';

describe('paths that stay within Free’s budget whatever the team’s size', () => {
  it('wakes at most WAKE_AT_ONCE waiting sessions on an admin’s retry, the longest waiting first', async () => {
    const id = await newIdentity();
    const { teamId } = await idsOf(id);
    const team = teamStub(env, teamId);
    const now = Date.now();
    // 60 sessions of the team report work waiting while the observer backs off (as each turn's slot request does).
    await team.reportFailure({ kind: 'rate_limit', code: '429', detail: null, until: now + 60_000 }, now);
    for (let i = 0; i < 60; i++)
      await team.acquire(`s-${String(i).padStart(2, '0')}`, now, {
        pending: 1,
        oldestAt: now - 60_000 + i,
        deadLetters: 0,
      });
    const seen: Usage[] = [];
    const stop = watchInvocations((u) => {
      if (u.label === 'fetch POST /api/admin/observer/retry') seen.push(u);
    });
    const res = await call('/api/admin/observer/retry', { method: 'POST', token: id.token });
    stop();
    expect(res.status).toBe(200);
    expect(((await res.json()) as { woken: number }).woken).toBe(WAKE_AT_ONCE);
    expect(spent(seen[0]!)).toBeLessThanOrEqual(FREE_SUBREQUESTS);
    // The longest waiting first; the others try again at their own back-off's end.
    expect(await team.clearBackoff(now)).toEqual(
      Array.from({ length: WAKE_AT_ONCE }, (_, i) => `s-${String(i).padStart(2, '0')}`),
    );
  });

  it('judges old rows in pages that fit the step even when every row of a page is held (one update each)', async () => {
    const ids = await idsOf(await newIdentity());
    const projectId = await seedProject(ids, `github.com/acme/${fresh('old')}`);
    const session = await seedSession(ids, projectId, fresh('s'));
    // A full page of instruction-like rows stored before the hold-back: a read and PAGE updates (51 statements).
    for (let i = 0; i < PAGE; i++)
      await seedObservation(ids, projectId, session, {
        title: `${HOSTILE[0]!.title} ${i}`,
        narrative: HOSTILE[0]!.text,
      });
    const steps: Usage[] = [];
    const stop = watchInvocations((u) => {
      if (u.label === 'job judge-held') steps.push(u);
    });
    const out = await runKindInline(env, judgeHeldJob, ids.teamId, {}).finally(stop);
    expect(out.result).toMatchObject({ held: PAGE });
    expect(steps.length).toBeGreaterThan(1);
    for (const s of steps) expect(spent(s)).toBeLessThanOrEqual(FREE_SUBREQUESTS);
  });
});
