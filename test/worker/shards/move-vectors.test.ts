// A team move deletes the old database's vectors page by page, each page read through a cursor (issue 35): no
// statement of that phase reads much more than the page it deletes. Before, every step read every record id of
// the team (three whole-team selects) to delete the next 500: at 1M records ~2,000 steps of ~1M rows each.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { fresh } from '../support/http';
import { spiedEnv, type SpiedStatement } from '../support/d1-spy';
import { moveSteps } from '../support/move';
import { idsOf } from '../support/seed';
import { newOwner } from '../teams/support';

const RECORDS = 1_250;

describe("a move's vectors phase", { timeout: 300_000 }, () => {
  it('reads the ids it deletes a page at a time: no statement reads more than a page of rows, however large the team', async () => {
    const a = await newOwner();
    const { teamId, userId } = await idsOf(a);
    const p = await env.DB.prepare(
      "INSERT INTO projects (team_id, key, visibility, created_at) VALUES (?, ?, 'team', 1) RETURNING id",
    )
      .bind(teamId, `github.com/a/${fresh('vec')}`)
      .first<{ id: number }>();
    const s = await env.DB.prepare(
      'INSERT INTO sessions (team_id, session_key, project_id, user_id, started_at) VALUES (?, ?, ?, ?, 1) RETURNING id',
    )
      .bind(teamId, fresh('s'), p!.id, userId)
      .first<{ id: number }>();
    // Every row in one millisecond but the last few: ties are broken by id, so they cost nothing extra.
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO observations (team_id, project_id, session_id, type, title, narrative, created_at, stored_at, content_hash, author_user_id)
       SELECT ?, ?, ?, 'discovery', 'fact ' || i, 'the cache needs key ' || i, CASE WHEN i > 1240 THEN i ELSE 7 END, i, 'h' || i, ? FROM n`,
    )
      .bind(RECORDS, teamId, p!.id, s!.id, userId)
      .run();

    const seen: { phase: string; s: SpiedStatement }[] = [];
    let phase = '';
    const e = spiedEnv(env, (st) => seen.push({ phase, s: st }));
    const steps = await moveSteps(e, teamId, { to: 'DB_1' }, (step) => {
      phase = step.out.cursor.phase;
    });
    // `phase` is the phase a step started in when its statements ran (set after each step for the next one).
    const reads = seen.filter((x) => x.phase === 'vectors' && /^\s*select/i.test(x.s.sql) && x.s.binding === 'DB');
    expect(reads.length).toBeGreaterThan(0);
    const most = Math.max(...reads.map((x) => x.s.rowsRead));
    expect(most, reads.map((x) => `${x.s.rowsRead}: ${x.s.sql.slice(0, 120)}`).join('\n')).toBeLessThanOrEqual(150);
    // Every id of the team was walked once: the reads add up to about the team's records.
    expect(reads.reduce((n, x) => n + x.s.rowsRead, 0)).toBeLessThan(RECORDS * 1.2);
    expect(steps.at(-1)!.out.done).toBe(true);
    expect(
      await env.DB_1.prepare('SELECT COUNT(*) AS n FROM observations WHERE team_id = ?')
        .bind(teamId)
        .first<{ n: number }>(),
    ).toEqual({ n: RECORDS });
  });
});
