// Export → import carries the correction history (issue 27): a team with superseded, merged, flagged and
// outdated records, exported by its owner and imported by an admin of a fresh team, reads the same to a third
// member there (superseded and flagged records out of the context index, the merged source out of search), with
// the links, event rows and signals re-made on the new ids; a second import adds nothing; a file written before
// the history lines and the per-row fields existed still imports.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, newIdentity } from '../support/http';
import { expectCorrected, historyOf, seedCorrections, truthOf } from '../support/history';
import { importNow, teamOfToken } from '../support/import';
import { seedWorld } from '../support/seed';

const exportOf = async (token: string) => (await call('/api/admin/export', { token })).text();
const imported = async (res: Response) => {
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { imported: Record<string, number> }).imported;
};

describe('export and import of the correction history', { timeout: 60_000 }, () => {
  it('shows a third member of the importing team the same context and search as in the source team', async () => {
    const a = await seedWorld();
    const c = await seedCorrections(a);
    const mateA = await newIdentity({ team: a.id.team, role: 'member' });
    const before = await truthOf(mateA.token, a.key, c.word);
    expectCorrected(before, c);

    const ndjson = await exportOf(a.id.token);
    const kinds = ndjson
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { kind: string }).kind);
    expect(kinds.filter((k) => k === 'link' || k === 'event' || k === 'signal').length).toBeGreaterThan(0);

    const b = await newIdentity({ user: a.id.user });
    const mateB = await newIdentity({ team: b.team, role: 'member' });
    expect(await imported(await importNow(b.token, ndjson))).toMatchObject({ observations: 6 });
    const after = await truthOf(mateB.token, a.key, c.word);
    expectCorrected(after, c);
    expect(after).toEqual(before);

    const teamB = await teamOfToken(b.token);
    const history = await historyOf(env.DB, teamB);
    expect(history).toEqual(await historyOf(env.DB, a.ids.teamId));
    expect(history.links).toEqual([
      { of: c.titles.dup, superseded_by: null, merged_into: c.titles.fix },
      { of: c.titles.old, superseded_by: c.titles.fix, merged_into: null },
      { of: c.titles.alone, superseded_by: c.titles.alone, merged_into: null },
    ]);
    expect(history.signals).toEqual([
      { observation_id: c.titles.fix, fetched: 0, useful: 1, wrong: 0, outdated: 0, review: null },
      { observation_id: c.titles.flagged, fetched: 0, useful: 0, wrong: 1, outdated: 0, review: 'pending' },
    ]);

    // The same file again: no second event row, the links and counts as they were.
    await imported(await importNow(b.token, ndjson));
    expect(await historyOf(env.DB, teamB)).toEqual(history);
  });

  it('imports a file written before the history lines and the per-row fields existed', async () => {
    const a = await seedWorld();
    const c = await seedCorrections(a);
    const NEW_FIELDS = ['git_branch', 'git_commit', 'imported_at', 'imported_author', 'released_at', 'released_by'];
    const old = (await exportOf(a.id.token))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((r) => r.kind !== 'link' && r.kind !== 'event' && r.kind !== 'signal')
      .map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).filter(([k]) => !NEW_FIELDS.includes(k)))))
      .join('\n');
    const b = await newIdentity({ user: a.id.user });
    expect(await imported(await importNow(b.token, old))).toMatchObject({ projects: 1, sessions: 1, observations: 6 });
    // Without history lines nothing is corrected on the target: every record stands.
    const t = await truthOf(b.token, a.key, c.word);
    for (const title of Object.values(c.titles)) expect(t.context).toContain(title);
  });
});
