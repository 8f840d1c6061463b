// A primed note someone forgot stays forgotten: priming the project again stores the other notes' duplicates and
// not the forgotten one, without cairn keeping its text — a tombstone holds only the note's hash, read from D1 —
// and forgetting the project deletes the tombstones too. A team moved to another database takes its tombstones along,
// and so do an export (imported by another team) and a backup's restore: the file holds the hash, never the text.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, fresh, newIdentity } from '../support/http';
import { finishJob, runJob } from '../support/jobs';
import { startJob } from '../../../src/jobs/start';
import { moveJob } from '../../../src/transfer/move-job';
import { idsOf, seedProject } from '../support/seed';
import { sha256Hex } from '../../../src/lib/crypto';
import { d1Holding, secretWord } from '../support/storage-scan';
import { importNow } from '../support/import';
import { teamDbs } from '../../../src/db/shards';
import { importPart, numbered } from '../../../src/transfer/import';
import { ExportRecord } from '../../../src/transfer/records';

const notesFor = (a: string, b: string) => [
  { kind: 'docs', title: `README.md: ${a} overview`, text: `Sections of README.md: Install · ${a} internals` },
  { kind: 'commit', title: `Add the cache`, text: `Commit 1a2b3c4: Add the ${b} cache. Touched: src/cache.ts` },
];

const tombstones = async (teamId: number, d1: D1Database = env.DB) =>
  (await d1
    .prepare('SELECT COUNT(*) AS n FROM prime_tombstones WHERE team_id = ?')
    .bind(teamId)
    .first<{ n: number }>())!.n;

/** A fresh owner, a fresh project and two notes with secret words in them, and a way to prime them (again). */
async function primedWorld(name: string) {
  const owner = await newIdentity({ role: 'owner' });
  const ids = await idsOf(owner);
  const project = `github.com/acme/${fresh(name)}`;
  const [kept, gone] = [secretWord(), secretWord()];
  const notes = notesFor(kept, gone);
  const prime = async () =>
    (await (await call('/api/prime', { token: owner.token, json: { project, notes } })).json()) as {
      stored: number[];
      duplicates: number;
    };
  return { owner, ids, project, kept, gone, notes, prime };
}

describe('forgetting a primed note', { timeout: 60_000 }, () => {
  it('keeps it forgotten on the next prime with only a hash stored, and the project forget takes the hash', async () => {
    const { owner, ids, project, kept, gone, prime } = await primedWorld('primed');

    const first = await prime();
    expect(first.stored).toHaveLength(2);
    const forgotten = first.stored[1]!;
    expect(
      (await call('/api/forget', { token: owner.token, json: { kind: 'observation', id: forgotten } })).status,
    ).toBe(200);
    expect(await tombstones(ids.teamId)).toBe(1);

    const again = await prime();
    expect(again).toMatchObject({ stored: [], duplicates: 2 });
    // Its text is nowhere in D1 (the tombstone is a hash); the kept note is there.
    expect((await d1Holding(gone)).filter((h) => !h.endsWith('_fts_data.block'))).toEqual([]);
    expect(await d1Holding(kept)).toEqual(expect.arrayContaining(['observations.narrative']));

    const confirm = await call('/api/forget', { token: owner.token, json: { kind: 'project', project, confirm: 1 } });
    expect(confirm.status).toBe(202);
    const { job } = (await confirm.json()) as { job: { id: string } };
    expect((await runJob(ids.teamId, job.id)).status).toBe('done');
    expect(await tombstones(ids.teamId)).toBe(0);
  });

  it('keeps it forgotten after the team moves to another database', async () => {
    const { owner, ids, prime } = await primedWorld('primed-moved');

    const first = await prime();
    expect(first.stored).toHaveLength(2);
    const forget = await call('/api/forget', {
      token: owner.token,
      json: { kind: 'observation', id: first.stored[1] },
    });
    expect(forget.status).toBe(200);

    const job = await startJob(env, moveJob, ids.teamId, { to: 'DB_1', force: false, settleMs: 0 });
    expect((await finishJob(ids.teamId, job.id)).status).toBe('done');
    expect(await tombstones(ids.teamId, env.DB_1)).toBe(1);
    expect(await tombstones(ids.teamId, env.DB)).toBe(0);

    // Served from the new database now: the kept note is a duplicate there, the forgotten one is not stored again.
    expect(await prime()).toMatchObject({ stored: [], duplicates: 2 });
    const stored = await env.DB_1.prepare('SELECT COUNT(*) AS n FROM observations WHERE team_id = ?')
      .bind(ids.teamId)
      .first<{ n: number }>();
    expect(stored).toEqual({ n: 1 });
  });

  it('counts a note primed under the older hash, which held the project id, as already there', async () => {
    const { notes, prime } = await primedWorld('primed-legacy');
    const first = await prime();
    expect(first.stored).toHaveLength(2);
    // As an install before 2026-12-03 stored them: sha256(prime, project id, kind, title, text).
    for (const [i, id] of first.stored.entries()) {
      const row = await env.DB.prepare('SELECT project_id FROM observations WHERE id = ?')
        .bind(id)
        .first<{ project_id: number }>();
      const n = notes[i]!;
      const legacy = (
        await sha256Hex(['prime', String(row!.project_id), n.kind, n.title, n.text].join('\u0000'))
      ).slice(0, 16);
      await env.DB.prepare('UPDATE observations SET content_hash = ? WHERE id = ?').bind(legacy, id).run();
    }
    expect(await prime()).toMatchObject({ stored: [], duplicates: 2 });
  });

  it('keeps it forgotten where the team is imported from its export or restored, with only the hash in the file', async () => {
    const { owner, ids, project, kept, gone, notes, prime } = await primedWorld('primed-exported');
    const first = await prime();
    const forget = await call('/api/forget', {
      token: owner.token,
      json: { kind: 'observation', id: first.stored[1] },
    });
    expect(forget.status).toBe(200);

    const file = await (await call('/api/admin/export', { token: owner.token })).text();
    const lines = file
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; project?: string; hash?: string });
    expect(lines.filter((l) => l.kind === 'tombstone')).toEqual([
      { kind: 'tombstone', project, hash: expect.stringMatching(/^[0-9a-f]{16}$/), created_at: expect.any(Number) },
    ]);
    expect(file).toContain(kept);
    expect(file).not.toContain(gone);

    // An owner of another team imports it and primes the same notes into the same project: nothing comes back.
    const other = await newIdentity({ role: 'owner', user: owner.user });
    const imported = await importNow(other.token, file);
    expect(imported.status, await imported.clone().text()).toBe(200);
    const otherIds = await idsOf(other);
    expect(await tombstones(otherIds.teamId)).toBe(1);
    const again = (await (await call('/api/prime', { token: other.token, json: { project, notes } })).json()) as {
      stored: number[];
      duplicates: number;
    };
    expect(again).toMatchObject({ stored: [], duplicates: 2 });
    expect((await d1Holding(gone)).filter((h) => !h.endsWith('_fts_data.block'))).toEqual([]);

    // A restore (the operator's whole-team path a backup's restore takes) writes it back by the project's key.
    const restored = await idsOf(await newIdentity({ role: 'owner' }));
    const records = lines.map((l) => ExportRecord.parse(l));
    await importPart(await teamDbs(env, restored.teamId), { kind: 'restore' }, numbered(records), Date.now());
    expect(await tombstones(restored.teamId)).toBe(1);
    expect(await tombstones(ids.teamId)).toBe(1);
  });

  it('writes a tombstone line into no project the importing member may not write, and makes no project for one', async () => {
    const { owner, project, prime } = await primedWorld('primed-private');
    const first = await prime();
    await call('/api/forget', { token: owner.token, json: { kind: 'observation', id: first.stored[0] } });
    const file = await (await call('/api/admin/export', { token: owner.token })).text();
    const tombstone = file
      .trim()
      .split('\n')
      .filter((l) => l.includes('"kind":"tombstone"'));
    expect(tombstone).toHaveLength(1);

    // Another team where the key belongs to someone else's private project, and a key nobody has.
    const admin = await newIdentity({ role: 'admin' });
    const mate = await newIdentity({ team: admin.team, role: 'member' });
    const mateIds = await idsOf(mate);
    await seedProject(mateIds, project, 'private');
    const nobody = tombstone[0]!.replace(JSON.stringify(project), JSON.stringify(`${project}-nobody`));
    const res = await importNow(admin.token, `${tombstone[0]}\n${nobody}\n`);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await tombstones(mateIds.teamId)).toBe(0);
    const made = await env.DB.prepare('SELECT key FROM projects WHERE team_id = ? ORDER BY key')
      .bind(mateIds.teamId)
      .all<{ key: string }>();
    expect(made.results.map((r) => r.key)).toEqual([project]);
  });
});
