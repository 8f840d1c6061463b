// A D1 batch refuses a select whose rows would hold two columns of one name (db/batch.ts): D1 answers batch
// rows as objects keyed by column name and drizzle reads them by position, so the second `key` overwrote the
// first and every field after it shifted (9e8f79c: a teammate's project alias was read as missing). The same
// joined select run alone, and selects whose names are distinct, still answer their rows.
import { env } from 'cloudflare:workers';
import { count, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '../../../src/db/client';
import { projectAliases, projects } from '../../../src/db/schema';
import { fresh } from '../support/http';
import { idsOf, seedProject, seedWorld } from '../support/seed';

const T0 = Date.parse('2026-05-04T09:00:00Z');

async function aliased() {
  const w = await seedWorld();
  const ids = await idsOf(w.id);
  const oldKey = `github.com/acme/${fresh('old')}`;
  const projectId = await seedProject(ids, `github.com/acme/${fresh('new')}`, 'team');
  await env.DB.prepare('INSERT INTO project_aliases (team_id, key, project_id, created_at) VALUES (?, ?, ?, ?)')
    .bind(ids.teamId, oldKey, projectId, T0)
    .run();
  return { teamId: ids.teamId, oldKey, projectId };
}

describe('a D1 batch of selects', () => {
  it('runs selects of unaliased SQL fields (counts, expressions), as every count in a batch does', async () => {
    const a = await aliased();
    const d = db(env.DB);
    const [n] = await d.batch([
      d
        .select({ n: count(), key: sql<string>`lower(${projects.key})` })
        .from(projects)
        .where(eq(projects.id, a.projectId)),
    ]);
    expect(n).toEqual([{ n: 1, key: expect.stringContaining('/new') }]);
  });

  it('refuses a joined select with two columns named key before it reaches D1', async () => {
    const a = await aliased();
    const d = db(env.DB);
    const joined = d
      .select({ alias: projectAliases.key, id: projects.id, key: projects.key })
      .from(projectAliases)
      .innerJoin(projects, eq(projects.id, projectAliases.projectId))
      .where(eq(projectAliases.key, a.oldKey));
    await expect(d.batch([joined])).rejects.toThrow(/two columns named "key"/);
    // Run alone (not in a batch), drizzle reads the row by position and it is right.
    expect(await joined).toEqual([{ alias: a.oldKey, id: a.projectId, key: expect.stringContaining('/new') }]);
  });

  it('refuses a select of two whole joined tables (both have id and team_id)', async () => {
    const a = await aliased();
    const d = db(env.DB);
    const whole = d
      .select()
      .from(projectAliases)
      .innerJoin(projects, eq(projects.id, projectAliases.projectId))
      .where(eq(projectAliases.key, a.oldKey));
    await expect(d.batch([d.select({ id: projects.id }).from(projects).limit(1), whole])).rejects.toThrow(
      /D1 batch query 2 selects two columns named "(team_id|key|created_at|id)"/,
    );
  });

  it('answers selects whose column names are distinct, joined or not', async () => {
    const a = await aliased();
    const d = db(env.DB);
    const [rows, one] = await d.batch([
      d
        .select({ alias: projectAliases.key, projectId: projects.id })
        .from(projectAliases)
        .innerJoin(projects, eq(projects.id, projectAliases.projectId))
        .where(eq(projectAliases.key, a.oldKey)),
      d.select({ id: projects.id }).from(projects).where(eq(projects.id, a.projectId)),
    ]);
    expect(rows).toEqual([{ alias: a.oldKey, projectId: a.projectId }]);
    expect(one).toEqual([{ id: a.projectId }]);
  });
});
