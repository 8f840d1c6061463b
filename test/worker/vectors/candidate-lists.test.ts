// The local vector index keeps a team's candidate list (newest ids with fingerprints) per isolate and reads it
// again only when the team's counter for the kind moved (migrations/0010_local_vector_generations.sql). These
// tests count the candidate reads through a database that passes every statement on, and check that every kind
// of write — this index's, another isolate's, or a plain SQL statement's — is seen by the next query.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { LocalVectorIndex, toBlob } from '../../../src/vectors/local-index';

const unit = (dims: number, hot: number) => Array.from({ length: dims }, (_, i) => (i === hot ? 1 : 0));
const freshTeam = () => 9_000_000 + Math.floor(Math.random() * 900_000);
const freshId = () => 20_000_000 + Math.floor(Math.random() * 10_000_000);

/** env.DB with a count of the statements that read a candidate list (the group_concat over local_vectors). */
function counting(): { d1: D1Database; reads: () => number } {
  let reads = 0;
  const d1 = new Proxy(env.DB, {
    get(target, prop) {
      if (prop === 'prepare') {
        return (sql: string) => {
          if (/group_concat/.test(sql) && /local_vectors/.test(sql)) reads++;
          return target.prepare(sql);
        };
      }
      const value = Reflect.get(target, prop);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { d1, reads: () => reads };
}

describe('local vector candidate lists', () => {
  it('are read once while the team writes no vector, and again after it writes one', async () => {
    const teamId = freshTeam();
    const { d1, reads } = counting();
    const idx = new LocalVectorIndex(d1);
    const first = freshId();
    await idx.upsert([{ id: first, teamId, projectId: 1, type: 'bugfix', values: unit(4, 0) }]);
    for (let i = 0; i < 3; i++)
      expect((await idx.query(unit(4, 0), { teamId, topK: 5 })).map((m) => m.id)).toEqual([first]);
    expect(reads()).toBe(1);
    const second = freshId();
    await idx.upsert([{ id: second, teamId, projectId: 1, type: 'bugfix', values: unit(4, 1) }]);
    expect((await idx.query(unit(4, 1), { teamId, topK: 1 })).map((m) => m.id)).toEqual([second]);
    expect(reads()).toBe(2);
  });

  it('see vectors another isolate wrote, rewrote or deleted since they were read', async () => {
    const teamId = freshTeam();
    const idx = new LocalVectorIndex(counting().d1);
    const other = new LocalVectorIndex(env.DB); // another isolate: its writes do not pass through `idx`
    const id = freshId();
    await other.upsert([{ id, teamId, projectId: 1, type: 'bugfix', values: unit(4, 0) }]);
    expect((await idx.query(unit(4, 0), { teamId, topK: 5 })).map((m) => m.id)).toEqual([id]);

    const added = freshId();
    await other.upsert([{ id: added, teamId, projectId: 1, type: 'bugfix', values: unit(4, 3) }]);
    expect((await idx.query(unit(4, 3), { teamId, topK: 1 })).map((m) => m.id)).toEqual([added]);

    await env.DB.prepare("UPDATE local_vectors SET embedding = ? WHERE kind = 'observation' AND record_id = ?")
      .bind(toBlob(unit(4, 2)), id)
      .run();
    expect((await idx.query(unit(4, 2), { teamId, topK: 1 }))[0]).toMatchObject({ id });

    await env.DB.prepare("DELETE FROM local_vectors WHERE kind = 'observation' AND record_id = ?").bind(added).run();
    expect((await idx.query(unit(4, 3), { teamId, topK: 5 })).map((m) => m.id)).not.toContain(added);
  });

  it("keep one team's list and scope apart from another's", async () => {
    const [a, b] = [freshTeam(), freshTeam()];
    const idx = new LocalVectorIndex(counting().d1);
    const [ia, ib, ic] = [freshId(), freshId(), freshId()];
    await idx.upsert([
      { id: ia, teamId: a, projectId: 1, type: 'bugfix', values: unit(4, 0) },
      { id: ib, teamId: b, projectId: 1, type: 'bugfix', values: unit(4, 0) },
      { id: ic, teamId: b, projectId: 2, type: 'decision', values: unit(4, 0) },
    ]);
    expect((await idx.query(unit(4, 0), { teamId: a, topK: 5 })).map((m) => m.id)).toEqual([ia]);
    expect((await idx.query(unit(4, 0), { teamId: b, topK: 5 })).map((m) => m.id).sort()).toEqual([ib, ic].sort());
    expect((await idx.query(unit(4, 0), { teamId: b, projectIds: [2], topK: 5 })).map((m) => m.id)).toEqual([ic]);
    expect((await idx.query(unit(4, 0), { teamId: b, types: ['bugfix'], topK: 5 })).map((m) => m.id)).toEqual([ib]);
    expect(await idx.query(unit(4, 0), { teamId: b, kind: 'summary', topK: 5 })).toEqual([]);
  });
});
