// A move whose team never comes to rest gives up (issue 37: untested): a session that holds an open observer turn
// for longer than the move waits (QUIESCE_MAX_MS, 10 minutes of the job's clock) ends the move with `team_busy`;
// the write gate is open again, the held session takes events again, the shard map is unchanged, the database
// the team lives on holds exactly what it held, and the other database holds nothing of the team.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { JobFailure } from '../../../src/jobs/types';
import { teamStub } from '../../../src/slots/team-do';
import { QUIESCE_MAX_MS } from '../../../src/transfer/move-job';
import { initEvent, release, script, send, toolEvent } from '../pipeline/support';
import { fresh } from '../support/http';
import { moveSteps, seedMemory, teamCounts, type MoveStep } from '../support/move';
import { idsOf } from '../support/seed';
import { newOwner } from '../teams/support';

/** Resolves once the fake observer has seen `n` requests of the scenario. */
const arrived = (id: string, n: number) =>
  fetch(`${env.FAKE_LLM_URL}/__scenario/${id}?arrived=${n}`).then((r) => r.text());

describe('a move whose team does not come to rest', { timeout: 300_000 }, () => {
  it('gives up with team_busy after QUIESCE_MAX_MS: gate open, session released, map unchanged, nothing changed on either database', async () => {
    const a = await newOwner();
    const ids = await idsOf(a);
    await seedMemory(env.DB, ids, fresh('w').replace(/\W/g, ''), { projects: 2, n: 80 });
    // A session whose observer turn is held open by the fake observer for as long as the test wants.
    const sid = fresh('busy');
    const tag = fresh('hold');
    await script(tag, [], 0, { hold: true });
    await send(a.token, 'init', initEvent(sid, 'Make the build green'));
    expect((await send(a.token, 'observations', toolEvent(sid, `npm run build SCENARIO:${tag}`))).status).toBe(202);
    await arrived(tag, 1);
    const before = await teamCounts(env.DB, ids.teamId);

    const steps: MoveStep[] = [];
    let failure: unknown = null;
    try {
      await moveSteps(env, ids.teamId, { to: 'DB_1', force: false }, (s) => void steps.push(s));
    } catch (err) {
      failure = err;
    }
    try {
      expect(failure).toBeInstanceOf(JobFailure);
      expect((failure as JobFailure).code).toBe('team_busy');
      // It looked again and again (every 2 s of the job's clock) before giving up, not at once.
      expect(steps.filter((s) => s.phase === 'quiesce').length).toBeGreaterThan(QUIESCE_MAX_MS / 2_000 / 2);

      expect(await teamStub(env, ids.teamId).writeGate()).toMatchObject({ moving: false });
      expect(
        await env.DB.prepare('SELECT shard FROM team_shards WHERE team_id = ?').bind(ids.teamId).first(),
      ).toBeNull();
      expect(await teamCounts(env.DB, ids.teamId)).toEqual(before);
      expect(Object.values(await teamCounts(env.DB_1, ids.teamId)).every((n) => n === 0)).toBe(true);
      // The session takes events again, as does the team's gate.
      expect((await send(a.token, 'observations', toolEvent(sid, 'npm run lint'))).status).toBe(202);
    } finally {
      await release(tag);
    }
  });
});
