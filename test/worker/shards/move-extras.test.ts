// What the export leaves out arrives with a team move too: every project alias, however many (a move copied
// the first 100 only).
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { startJob } from '../../../src/jobs/start';
import { moveJob } from '../../../src/transfer/move-job';
import { fresh } from '../support/http';
import { finishJob } from '../support/jobs';
import { idsOf } from '../support/seed';
import { newOwner } from '../teams/support';

describe('a team move copies what the export leaves out', { timeout: 120_000 }, () => {
  it('copies all 150 aliases of a project, not only the first page', async () => {
    const a = await newOwner();
    const { teamId } = await idsOf(a);
    const key = `github.com/a/${fresh('p')}`;
    const p = await env.DB.prepare(
      "INSERT INTO projects (team_id, key, visibility, created_at) VALUES (?, ?, 'team', 1) RETURNING id",
    )
      .bind(teamId, key)
      .first<{ id: number }>();
    await env.DB.batch(
      Array.from({ length: 150 }, (_, i) =>
        env.DB.prepare('INSERT INTO project_aliases (team_id, key, project_id, created_at) VALUES (?, ?, ?, 1)').bind(
          teamId,
          `${key}-old-${i}`,
          p!.id,
        ),
      ),
    );
    const job = await startJob(env, moveJob, teamId, { to: 'DB_1', force: false, settleMs: 0 });
    expect((await finishJob(teamId, job.id)).status).toBe('done');
    expect(
      await env.DB_1.prepare('SELECT COUNT(*) AS n FROM project_aliases WHERE team_id = ?')
        .bind(teamId)
        .first<{ n: number }>(),
    ).toEqual({ n: 150 });
  });
});
