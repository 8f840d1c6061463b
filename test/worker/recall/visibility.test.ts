// The shared read-visibility predicate and the team settings reader, against real D1 rows.
import { env } from 'cloudflare:workers';
import { and, asc, inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '../../../src/db/client';
import { observations, summaries } from '../../../src/db/schema';
import { parseTeamSettings } from '../../../src/db/team-settings';
import { canReadObservation, canReadSummary, loadViewer, type Viewer } from '../../../src/db/visibility';
import { fresh, newIdentity, forgetTokenMemo } from '../support/http';
import { idsOf, seedObservation, seedProject, seedSession, seedSummary } from '../support/seed';

async function readable(v: Viewer, ids: number[]): Promise<number[]> {
  const rows = await db(env.DB)
    .select({ id: observations.id })
    .from(observations)
    .where(and(inArray(observations.id, ids), canReadObservation(v)))
    .orderBy(asc(observations.id));
  return rows.map((r) => r.id);
}

describe('canReadObservation', () => {
  it('admits team rows and own private rows, and rejects deleted, foreign-team, teammate-private and teammate-sensitive rows', async () => {
    const me = await newIdentity();
    const mate = await newIdentity({ team: me.team });
    const stranger = await newIdentity();
    const [mi, ti, si] = await Promise.all([idsOf(me), idsOf(mate), idsOf(stranger)]);
    const shared = await seedProject(mi, `github.com/acme/${fresh('r')}`);
    const mine = await seedProject(mi, `local/${me.user}/${fresh('x')}`, 'private');
    const theirsPrivate = await seedProject(ti, `local/${mate.user}/${fresh('y')}`, 'private');
    const foreign = await seedProject(si, `github.com/acme/${fresh('r')}`);
    const s = (ids: typeof mi, p: number) => seedSession(ids, p, fresh('s'));

    const teamRow = await seedObservation(ti, shared, await s(ti, shared), { title: 'team row' });
    const ownPrivate = await seedObservation(mi, mine, await s(mi, mine), { title: 'own private' });
    const ownSensitive = await seedObservation(mi, shared, await s(mi, shared), {
      type: 'sensitive',
      title: 'own sensitive',
    });
    const mateSensitive = await seedObservation(ti, shared, await s(ti, shared), {
      type: 'sensitive',
      title: 'mate sensitive',
    });
    const matePrivate = await seedObservation(ti, theirsPrivate, await s(ti, theirsPrivate), { title: 'mate private' });
    const deleted = await seedObservation(mi, shared, await s(mi, shared), { title: 'deleted' });
    await env.DB.prepare('UPDATE observations SET deleted_at = 1 WHERE id = ?').bind(deleted).run();
    const other = await seedObservation(si, foreign, await s(si, foreign), { title: 'other team' });
    const all = [teamRow, ownPrivate, ownSensitive, mateSensitive, matePrivate, deleted, other];

    expect(await readable(await loadViewer(env.DB, mi), all)).toEqual([teamRow, ownPrivate, ownSensitive]);
    expect(await readable({ ...(await loadViewer(env.DB, mi)), shareSensitive: true }, all)).toEqual([
      teamRow,
      ownPrivate,
      ownSensitive,
      mateSensitive,
    ]);
    expect(await readable(await loadViewer(env.DB, si), all)).toEqual([other]);
  });

  it('reads share_sensitive from the team settings', async () => {
    const me = await newIdentity();
    const ids = await idsOf(me);
    expect((await loadViewer(env.DB, ids)).shareSensitive).toBe(false);
    await env.DB.prepare(`UPDATE teams SET settings = '{"share_sensitive":true}' WHERE id = ?`).bind(ids.teamId).run();
    forgetTokenMemo();
    expect((await loadViewer(env.DB, ids)).shareSensitive).toBe(true);
  });

  it('scopes summaries by team, visible project and soft delete', async () => {
    const me = await newIdentity();
    const stranger = await newIdentity();
    const [mi, si] = await Promise.all([idsOf(me), idsOf(stranger)]);
    const p = await seedProject(mi, `github.com/acme/${fresh('r')}`);
    const q = await seedProject(si, `github.com/acme/${fresh('r')}`);
    const mine = await seedSummary(mi, p, await seedSession(mi, p, fresh('s')), { request: 'a' });
    const gone = await seedSummary(mi, p, await seedSession(mi, p, fresh('s')), { request: 'b' });
    await env.DB.prepare('UPDATE summaries SET deleted_at = 1 WHERE id = ?').bind(gone).run();
    const theirs = await seedSummary(si, q, await seedSession(si, q, fresh('s')), { request: 'c' });
    const rule = canReadSummary(await loadViewer(env.DB, mi));
    const rows = await db(env.DB)
      .select({ id: summaries.id })
      .from(summaries)
      .where(and(inArray(summaries.id, [mine, gone, theirs]), rule));
    expect(rows.map((r) => r.id)).toEqual([mine]);
  });
});

describe('parseTeamSettings', () => {
  it('keeps valid known keys, drops invalid ones, and passes unknown keys through', () => {
    expect(
      parseTeamSettings('{"share_sensitive":true,"context_observations":30,"mode":"code--zh","retention_days":90}'),
    ).toEqual({
      share_sensitive: true,
      context_observations: 30,
      mode: 'code--zh',
      retention_days: 90,
    });
    expect(parseTeamSettings('{"share_sensitive":"yes","context_observations":-1,"context_sessions":5}')).toEqual({
      context_sessions: 5,
    });
  });

  it.each([null, '', 'not json', '[1,2]', '42'])('treats %j as no settings', (raw) => {
    expect(parseTeamSettings(raw)).toEqual({});
  });
});
