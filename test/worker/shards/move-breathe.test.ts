// A move's deletes leave other teams room on the database they share (issue 37: bench/move-bystander measured it,
// and deleting `ctx.breathe()` passed every test). D1 runs one statement at a time: a step that sends its deletes
// back to back makes each statement of another team's request wait behind one delete, so a request of several
// statements is spread over as many deletes, and locally (one workerd thread) not one of it runs until the deletes
// end. With a pause after each unit (as long as the unit took), the other team's requests are served between two
// deletes. Asserted by order, not time: which D1 calls and which request ends came between which deletes.
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import app from '../../../src/app';
import type { CairnEnv } from '../../../src/env';
import { spiedEnv } from '../support/d1-spy';
import { BASE, fresh } from '../support/http';
import { moveSteps } from '../support/move';
import { idsOf } from '../support/seed';
import { newOwner } from '../teams/support';

const OBSERVATIONS = 3_000;

async function seedTeam(teamId: number, userId: number): Promise<void> {
  const p = await env.DB.prepare(
    "INSERT INTO projects (team_id, key, visibility, created_at) VALUES (?, ?, 'team', 1) RETURNING id",
  )
    .bind(teamId, `github.com/a/${fresh('p')}`)
    .first<{ id: number }>();
  const s = await env.DB.prepare(
    'INSERT INTO sessions (team_id, session_key, project_id, user_id, started_at) VALUES (?, ?, ?, ?, 1) RETURNING id',
  )
    .bind(teamId, fresh('s'), p!.id, userId)
    .first<{ id: number }>();
  await env.DB.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO observations (team_id, project_id, session_id, type, title, narrative, facts, created_at, stored_at, content_hash, author_user_id)
     SELECT ?, ?, ?, 'discovery', 'fact ' || i, 'the build cache needs the locale in its key, case ' || i, '["one fact","another fact"]', i, i, 'h' || i, ? FROM n`,
  )
    .bind(OBSERVATIONS, teamId, p!.id, s!.id, userId)
    .run();
}

describe("a move's deletes and another team's requests", { timeout: 600_000 }, () => {
  it("serve another team's whole request between two deletes of the old database", async () => {
    const [a, b] = [await newOwner(), await newOwner()];
    const ia = await idsOf(a);
    await seedTeam(ia.teamId, ia.userId);

    // One sequence of events: each D1 call of the move ('S') and of the bystander ('B'), and each request's ends.
    const events: string[] = [];
    let inDrop = false;
    const moveEnv = spiedEnv(env, () => {}, { before: () => void (inDrop && events.push('S')) });
    const byEnv = spiedEnv(env, () => {}, { before: () => void events.push('B') });

    let stop = false;
    let requests = 0;
    const bystander = (async () => {
      while (!stop) {
        events.push('(');
        const ctx = createExecutionContext();
        const res = await app.fetch(
          new Request(`${BASE}/api/search?q=${encodeURIComponent(`locale ${requests}`)}`, {
            headers: { authorization: `Bearer ${b.token}` },
          }),
          byEnv as CairnEnv,
          ctx,
        );
        await res.arrayBuffer();
        await waitOnExecutionContext(ctx);
        expect(res.status).toBe(200);
        events.push(')');
        requests++;
        // Only while the drop runs: between two of its steps the move does nothing.
        if (!inDrop) await new Promise((r) => setTimeout(r, 5));
      }
    })();

    const steps = await moveSteps(moveEnv, ia.teamId, { to: 'DB_1' }, (step) => {
      inDrop = step.out.cursor.phase === 'drop';
    });
    stop = true;
    await bystander;
    expect(steps.filter((s) => s.phase === 'drop').length).toBeGreaterThanOrEqual(1);

    // The bystander's requests served whole while the drop deleted: after its first delete, before its last.
    const first = events.indexOf('S');
    const last = events.lastIndexOf('S');
    const deletes = events.filter((e) => e === 'S').length;
    let served = 0;
    for (let i = first, open = -1; i < last; i++) {
      if (events[i] === '(') open = i;
      if (events[i] === ')' && open > first && events.slice(open, i).includes('B')) served++;
    }
    expect(deletes).toBeGreaterThan(10);
    // One request between most two deletes (measured: ~30 of 32); with the deletes back to back, none or one.
    expect(served, events.join('')).toBeGreaterThanOrEqual(Math.min(5, deletes / 4));
    expect(
      await env.DB.prepare('SELECT COUNT(*) AS n FROM observations WHERE team_id = ?')
        .bind(ia.teamId)
        .first<{ n: number }>(),
    ).toEqual({ n: 0 });
  });
});
