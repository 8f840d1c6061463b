// The fts_scope column of observations_fts (migration 0002): tokens per row, kept in step with project moves, never matched by user text.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../../../src/auth/types';
import { searchObservations } from '../../../src/search/search';
import { fresh, newIdentity } from '../support/http';
import { idsOf, seedObservation, seedProject, seedSession, type Ids } from '../support/seed';

async function team() {
  const id = await newIdentity();
  const ids = await idsOf(id);
  const auth: AuthContext = {
    tokenId: 0,
    teamId: ids.teamId,
    teamSlug: id.team,
    userId: ids.userId,
    handle: id.user,
    role: 'owner',
    deviceId: null,
    deviceName: null,
    scopes: ['read'],
  };
  return { id, ids, auth };
}

async function project(ids: Ids) {
  const key = `github.com/acme/${fresh('repo')}`;
  const projectId = await seedProject(ids, key);
  const sessionId = await seedSession(ids, projectId, fresh('s'));
  return { key, projectId, add: (title: string) => seedObservation(ids, projectId, sessionId, { title }) };
}

/** Row ids the FTS index holds under one scope token (`t<team>` or `p<project>`, behind the private-use mark). */
async function indexed(token: string): Promise<number[]> {
  const { results } = await env.DB.prepare(
    'SELECT rowid AS id FROM observations_fts WHERE observations_fts MATCH ? ORDER BY rowid',
  )
    .bind(`fts_scope : "\uE000${token}"`)
    .all<{ id: number }>();
  return results.map((r) => r.id);
}

describe('observations_fts scope tokens', () => {
  it('indexes every row under its team and project tokens', async () => {
    const t = await team();
    const a = await project(t.ids);
    const b = await project(t.ids);
    const inA = await a.add('Scoped row one');
    const inB = await b.add('Scoped row two');
    expect(await indexed(`p${a.projectId}`)).toEqual([inA]);
    expect(await indexed(`p${b.projectId}`)).toEqual([inB]);
    expect(await indexed(`t${t.ids.teamId}`)).toEqual([inA, inB]);
  });

  it('moves a row to its new project token when project_id changes, as a project merge does', async () => {
    const t = await team();
    const from = await project(t.ids);
    const into = await project(t.ids);
    const id = await from.add('Hippogriff in the release notes');
    await env.DB.prepare('UPDATE observations SET project_id = ? WHERE id = ?').bind(into.projectId, id).run();
    expect(await indexed(`p${from.projectId}`)).toEqual([]);
    expect(await indexed(`p${into.projectId}`)).toEqual([id]);
    const res = await searchObservations(env, t.auth, { q: 'hippogriff', project: [into.key], mode: 'fts' });
    expect(res.results.map((r) => r.id)).toEqual([id]);
  });

  it('drops a deleted row from the scope tokens too', async () => {
    const t = await team();
    const p = await project(t.ids);
    const id = await p.add('Short-lived row');
    await env.DB.prepare('DELETE FROM observation_files WHERE observation_id = ?').bind(id).run();
    await env.DB.prepare('DELETE FROM observations WHERE id = ?').bind(id).run();
    expect(await indexed(`p${p.projectId}`)).toEqual([]);
  });

  it('never matches a query word against the scope tokens', async () => {
    const t = await team();
    const p = await project(t.ids);
    await p.add('Nothing special here');
    for (const q of [
      `p${p.projectId}`,
      `\uE000p${p.projectId}`,
      `\uE000t${t.ids.teamId}`,
      'fts_scope',
      `fts_scope:p${p.projectId}`,
    ]) {
      const scoped = await searchObservations(env, t.auth, { q, project: [p.key], mode: 'fts' });
      const teamWide = await searchObservations(env, t.auth, { q, mode: 'fts' });
      expect(scoped.results, q).toEqual([]);
      expect(teamWide.results, q).toEqual([]);
    }
  });

  it('finds matches in each of several filtered projects and in none of the others', async () => {
    const t = await team();
    const [a, b, c] = [await project(t.ids), await project(t.ids), await project(t.ids)];
    const inA = await a.add('Manticore sighting in module a');
    const inB = await b.add('Manticore sighting in module b');
    await c.add('Manticore sighting in module c');
    const res = await searchObservations(env, t.auth, {
      q: 'manticore sighting',
      project: [a.key, b.key],
      mode: 'fts',
    });
    expect(res.results.map((r) => r.id).sort((x, y) => x - y)).toEqual([inA, inB]);
    expect(res.total).toBe(2);
  });

  it('keeps a one-project search from seeing the same words in another team', async () => {
    const mine = await team();
    const theirs = await team();
    const p = await project(mine.ids);
    const q = await project(theirs.ids);
    const id = await p.add('Chimera config loader');
    await q.add('Chimera config loader');
    const res = await searchObservations(env, mine.auth, { q: 'chimera loader', mode: 'fts' });
    expect(res.results.map((r) => r.id)).toEqual([id]);
  });
});
