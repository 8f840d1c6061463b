// A primed note someone forgot stays forgotten: priming the project again stores the other notes' duplicates and
// not the forgotten one, without cairn keeping its text — a tombstone holds only the note's hash, read from D1 —
// and forgetting the project deletes the tombstones too.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, fresh, newIdentity } from '../support/http';
import { runJob } from '../support/jobs';
import { idsOf } from '../support/seed';
import { d1Holding, secretWord } from '../support/storage-scan';

const notesFor = (a: string, b: string) => [
  { kind: 'docs', title: `README.md: ${a} overview`, text: `Sections of README.md: Install · ${a} internals` },
  { kind: 'commit', title: `Add the cache`, text: `Commit 1a2b3c4: Add the ${b} cache. Touched: src/cache.ts` },
];

const tombstones = async (teamId: number) =>
  (await env.DB.prepare('SELECT COUNT(*) AS n FROM prime_tombstones WHERE team_id = ?')
    .bind(teamId)
    .first<{ n: number }>())!.n;

describe('forgetting a primed note', { timeout: 60_000 }, () => {
  it('keeps it forgotten on the next prime with only a hash stored, and the project forget takes the hash', async () => {
    const owner = await newIdentity({ role: 'owner' });
    const ids = await idsOf(owner);
    const project = `github.com/acme/${fresh('primed')}`;
    const [kept, gone] = [secretWord(), secretWord()];
    const prime = async () =>
      (await (
        await call('/api/prime', { token: owner.token, json: { project, notes: notesFor(kept, gone) } })
      ).json()) as { stored: number[]; duplicates: number };

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
});
