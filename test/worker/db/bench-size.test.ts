// The capacity bench's size probe (search/queries.ts): row count and database bytes, read through the query builder.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { databaseSize } from '../../../src/search/queries';
import { fresh, newIdentity } from '../support/http';
import { idsOf, seedObservation, seedProject, seedSession } from '../support/seed';

describe('databaseSize', () => {
  it('counts observations and reports the database size in bytes', async () => {
    const ids = await idsOf(await newIdentity());
    const project = await seedProject(ids, `github.com/acme/${fresh('r')}`);
    const session = await seedSession(ids, project, fresh('s'));
    const before = await databaseSize(env.DB);
    await seedObservation(ids, project, session, { title: 'one more row' });
    const after = await databaseSize(env.DB);
    expect(after.observations).toBe(before.observations + 1);
    expect(after.bytes).toBeGreaterThan(0);
  });
});
