// A team move keeps each record's evidence (issue 34): the copy and the change log's rounds both travel as export
// lines, which now carry the files' evidence ids (`file_ids`), so a moved record's file rows hold the same blob, ws
// and base ids on the new database, where before every moved record was judged `unknown` (no ids).
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { fresh } from '../support/http';
import { moveSteps } from '../support/move';
import { idsOf, seedProject, seedSession } from '../support/seed';
import { newOwner } from '../teams/support';
import { blob, seedCited, ws } from '../evidence/support';

const T0 = Date.parse('2026-06-01T09:00:00Z');

/** The team's file rows with their ids, named by their record's title (ids differ between databases). */
async function evidence(d: D1Database, teamId: number) {
  const { results } = await d
    .prepare(
      `SELECT o.title, f.path, f.kind, f.blob, f.ws, f.base FROM observation_files f
         JOIN observations o ON o.id = f.observation_id
        WHERE f.team_id = ? ORDER BY o.title, f.path, f.kind`,
    )
    .bind(teamId)
    .all();
  return results;
}

describe('a team move', { timeout: 300_000 }, () => {
  it("keeps every record's evidence ids, copied or written while the move copied", async () => {
    const a = await newOwner();
    const ids = await idsOf(a);
    const projectId = await seedProject(ids, `github.com/acme/${fresh('repo')}`);
    const session = await seedSession(ids, projectId, fresh('s'), T0);
    await seedCited(ids, projectId, session, {
      title: 'Theme colours come from tokens',
      files: [
        { path: 'src/theme.ts', blob: blob('a'), ws: ws('1'), kind: 'read' },
        { path: 'src/render.ts', blob: blob('b'), ws: ws('2'), base: blob('c'), kind: 'modified' },
        { path: 'src/render.ts', blob: blob('b'), ws: ws('2'), kind: 'read' },
      ],
      createdAt: T0 + 60_000,
    });
    await seedCited(ids, projectId, session, {
      title: 'Outside the repository, no ids',
      files: [{ path: '/etc/hosts', blob: null, kind: 'read' }],
      createdAt: T0 + 2 * 60_000,
    });
    let during = false;
    const steps = await moveSteps(env, ids.teamId, { to: 'DB_1' }, async (step) => {
      if (step.out.cursor.phase !== 'copy' && step.phase === 'copy' && !during) {
        during = true;
        // Written once the copy has passed: it reaches the new database by the change log's round.
        await seedCited(ids, projectId, session, {
          title: 'Written while the move copied',
          files: [{ path: 'src/late.ts', blob: blob('d'), ws: ws('3'), base: blob('e'), kind: 'modified' }],
          createdAt: T0 + 3 * 60_000,
        });
      }
    });
    expect(steps.at(-1)!.out.done).toBe(true);
    expect(during).toBe(true);
    expect(await evidence(env.DB_1, ids.teamId)).toEqual([
      { title: 'Outside the repository, no ids', path: '/etc/hosts', kind: 'read', blob: null, ws: null, base: null },
      {
        title: 'Theme colours come from tokens',
        path: 'src/render.ts',
        kind: 'modified',
        blob: blob('b'),
        ws: ws('2'),
        base: blob('c'),
      },
      {
        title: 'Theme colours come from tokens',
        path: 'src/render.ts',
        kind: 'read',
        blob: blob('b'),
        ws: ws('2'),
        base: null,
      },
      {
        title: 'Theme colours come from tokens',
        path: 'src/theme.ts',
        kind: 'read',
        blob: blob('a'),
        ws: ws('1'),
        base: null,
      },
      {
        title: 'Written while the move copied',
        path: 'src/late.ts',
        kind: 'modified',
        blob: blob('d'),
        ws: ws('3'),
        base: blob('e'),
      },
    ]);
  });
});
