// Every step of a team move is safe to run again (issue 37: a `copy` or `drop` step run again after its batch
// landed was untested). A step's writes land before the lane saves its cursor, so an object that dies between the
// two runs the step again from the old cursor: here every step of the move runs twice, and the new database holds
// exactly what the old one held (no row twice, no count doubled), and the old one ends empty.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { fresh } from '../support/http';
import { moveSteps, seedMemory, teamCounts } from '../support/move';
import { idsOf } from '../support/seed';
import { newOwner } from '../teams/support';

describe('a team move whose every step runs twice', { timeout: 300_000 }, () => {
  it('carries each row once and empties the old database (copy, extras and drop run again from their old cursors)', async () => {
    const a = await newOwner();
    const ids = await idsOf(a);
    // More records than one copy piece (60) and one delete chunk (200) in a project.
    await seedMemory(env.DB, ids, fresh('w').replace(/\W/g, ''), { projects: 3, n: 250 });
    const before = await teamCounts(env.DB, ids.teamId);
    const twice: string[] = [];
    const steps = await moveSteps(env, ids.teamId, { to: 'DB_1' }, undefined, {
      repeat: (phase) => (twice.push(phase), true),
    });
    expect(twice).toEqual(expect.arrayContaining(['copy', 'extras', 'drop']));
    expect(twice.filter((p) => p === 'copy').length).toBeGreaterThan(1);
    expect(await teamCounts(env.DB_1, ids.teamId)).toEqual(before);
    expect(Object.values(await teamCounts(env.DB, ids.teamId)).every((n) => n === 0)).toBe(true);
    // What the job reports counted each record once.
    const result = steps.at(-1)!.out.result as { counts: { observations: number; prompts: number; summaries: number } };
    expect(result.counts).toMatchObject({
      observations: before.observations,
      prompts: before.prompts,
      summaries: before.summaries,
    });
  });
});
