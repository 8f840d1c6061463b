// The forget-project job after restarts: a step cut off after some chunks' batches landed, and every step run twice
// from the cursor it started from (its writes landed, its cursor was lost), still deletes everything once and
// reports exactly what it deleted, with one audit row. Read from D1.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { configOf } from '../../../src/config';
import { metered } from '../../../src/db/meter';
import { forgetProjectJob } from '../../../src/forget/project-job';
import { stepContext } from '../../../src/jobs/step';
import { CuttingVectorize, FakeVectorize, productionVectorEnv } from '../support/fake-vectorize';
import { fresh, newIdentity } from '../support/http';
import { idsOf, seedProject, seedSession } from '../support/seed';

const count = async (sql: string, ...args: unknown[]) =>
  (await env.DB.prepare(sql)
    .bind(...args)
    .first<{ n: number }>())!.n;

describe('forget-project job across restarts', { timeout: 60_000 }, () => {
  it('reports every record and session it deleted when a step is cut off and every step runs again', async () => {
    const owner = await newIdentity({ role: 'owner' });
    const ids = await idsOf(owner);
    const key = `github.com/acme/${fresh('repo')}`;
    const projectId = await seedProject(ids, key);
    const sessions = [await seedSession(ids, projectId, fresh('s')), await seedSession(ids, projectId, fresh('s'))];
    const now = Date.now();
    await env.DB.prepare(
      `WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 1200)
       INSERT INTO observations (team_id, project_id, session_id, type, title, narrative, created_at, stored_at, content_hash, author_user_id)
       SELECT ?1, ?2, CASE WHEN i % 2 = 0 THEN ?3 ELSE ?4 END, 'discovery', 'note ' || i, 'n', ?5 - i, ?5, 'n-' || i, ?6 FROM k`,
    )
      .bind(ids.teamId, projectId, sessions[0], sessions[1], now, ids.userId)
      .run();
    const p = forgetProjectJob.params.parse({ projectId, key, total: 1200 });
    const jobId = fresh('job');
    const first = forgetProjectJob.init(p, { teamId: ids.teamId, now }).cursor;
    const step = (index: FakeVectorize, cursor: typeof first) =>
      metered(env, 'job forget-project', () =>
        forgetProjectJob.step(
          stepContext({
            env: productionVectorEnv(index),
            jobId,
            teamId: ids.teamId,
            actorUserId: ids.userId,
            budget: configOf(env).jobStep,
          }),
          p,
          cursor,
        ),
      );
    const left = () => count('SELECT COUNT(*) AS n FROM observations WHERE project_id = ?', projectId);

    // Vectors go before each chunk's rows, five calls a chunk of 500: the sixth call (the second chunk's) dies
    // after the first chunk's batch landed.
    await expect(step(new CuttingVectorize(6), first)).rejects.toThrow('cut off mid-step');
    expect(await left()).toBe(700);

    let cursor = first;
    let out = null;
    for (let i = 0; i < 20; i++) {
      await step(new FakeVectorize(), cursor);
      out = await step(new FakeVectorize(), cursor);
      cursor = out.cursor;
      if (out.done) break;
    }
    expect(out?.done).toBe(true);
    expect(out?.result).toMatchObject({ counts: { observations: 1200, summaries: 0, prompts: 0, sessions: 2 } });
    expect(await left()).toBe(0);
    expect(await count('SELECT COUNT(*) AS n FROM sessions WHERE project_id = ?', projectId)).toBe(0);
    expect(await count('SELECT COUNT(*) AS n FROM projects WHERE id = ?', projectId)).toBe(0);
    const audits = await env.DB.prepare("SELECT detail FROM audit_log WHERE team_id = ? AND action = 'forget'")
      .bind(ids.teamId)
      .all<{ detail: string }>();
    expect(audits.results.map((r) => JSON.parse(r.detail))).toEqual([
      { project_id: projectId, observations: 1200, summaries: 0, prompts: 0, sessions: 2 },
    ]);
  });
});
