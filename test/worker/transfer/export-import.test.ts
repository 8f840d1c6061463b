// Export → import into another team: same search results and context index; a second import adds nothing;
// no token material leaves; a bad line stores nothing; other people's rows become the importer's, named as provenance.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { storePrompt } from '../../../src/store/sessions';
import { call, fresh, newIdentity } from '../support/http';
import { comparableContext } from '../support/comparable';
import { importNow } from '../support/import';
import { idsOf, seedWorld } from '../support/seed';

const T0 = Date.parse('2026-05-04T09:00:00Z');

async function source() {
  const w = await seedWorld();
  const word = `xfer${Math.random().toString(36).slice(2, 9)}`;
  await w.add({
    type: 'bugfix',
    title: `Fixed the ${word} cache key`,
    narrative: `The ${word} cache key missed the locale.`,
    facts: [`${word} keys include locale`],
    filesModified: ['src/cache.ts'],
    createdAt: T0,
  });
  await w.add({
    type: 'decision',
    title: `Keep ${word} server-side`,
    narrative: 'Negotiation stays on the server.',
    filesRead: ['src/router.ts'],
    createdAt: T0 + 60_000,
  });
  await w.summary({
    request: `Fix the ${word} bug`,
    learned: 'Locale was missing',
    completed: 'Fixed',
    createdAt: T0 + 120_000,
  });
  await storePrompt(env.DB, {
    teamId: w.ids.teamId,
    projectId: w.projectId,
    sessionDbId: w.sessionId,
    promptNumber: 1,
    promptId: 'p-1',
    text: `please fix ${word}`,
    authorUserId: w.ids.userId,
    createdAt: T0 - 1_000,
  });
  return { ...w, word };
}

const exportOf = (token: string, project?: string) =>
  call(`/api/admin/export${project ? `?project=${encodeURIComponent(project)}` : ''}`, { token });
const importInto = importNow;
/** Ids differ between teams; everything else must not. */

describe('export and import', { timeout: 30_000 }, () => {
  it('moves a project into another team with the same search results and context index, and imports it only once', async () => {
    const a = await source();
    const res = await exportOf(a.id.token, a.key);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const ndjson = await res.text();
    const kinds = ndjson
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { kind: string }).kind);
    expect(new Set(kinds)).toEqual(new Set(['user', 'project', 'session', 'prompt', 'observation', 'summary']));
    expect(ndjson).not.toContain(a.id.token);
    expect(ndjson).not.toMatch(/"(hash|token|prefix)"/);

    // The receiving team's owner has the same handle, so the context reads the same from their side.
    const b = await newIdentity({ user: a.id.user });
    const first = await importInto(b.token, ndjson);
    expect(first.status).toBe(200);
    expect(((await first.json()) as { imported: Record<string, number> }).imported).toEqual({
      users: 0,
      projects: 1,
      sessions: 1,
      prompts: 1,
      observations: 2,
      summaries: 1,
    });

    for (const q of [a.word, 'locale', 'server']) {
      const titles = async (token: string) =>
        (
          (await (
            await call(`/api/search?q=${encodeURIComponent(q)}&project=${encodeURIComponent(a.key)}`, { token })
          ).json()) as { results: { title: string }[] }
        ).results.map((r) => r.title);
      const there = await titles(a.id.token);
      expect(there.length, q).toBeGreaterThan(0);
      expect(await titles(b.token), q).toEqual(there);
    }
    const context = async (token: string) =>
      comparableContext(
        await (await call(`/api/context?project=${encodeURIComponent(a.key)}&tz=UTC`, { token })).text(),
      );
    const index = await context(a.id.token);
    expect(index).toContain(`Fixed the ${a.word} cache key`);
    expect(await context(b.token)).toEqual(index);
    const times = await env.DB.prepare(
      'SELECT o.created_at FROM observations o JOIN teams t ON t.id = o.team_id WHERE t.slug = ? ORDER BY 1',
    )
      .bind(b.team)
      .all<{ created_at: number }>();
    expect(times.results.map((r) => r.created_at)).toEqual([T0, T0 + 60_000]);

    const again = await importInto(b.token, ndjson);
    expect(((await again.json()) as { imported: Record<string, number> }).imported).toEqual({
      users: 0,
      projects: 0,
      sessions: 0,
      prompts: 0,
      observations: 0,
      summaries: 0,
    });
  });

  it("files another team's authors as the importer's own rows, naming them only as provenance, and keeps platforms", async () => {
    const a = await source();
    const ndjson = await (await exportOf(a.id.token)).text();
    const b = await newIdentity();
    const done = (await (await importInto(b.token, ndjson)).json()) as { imported: Record<string, number> };
    expect(done.imported).toMatchObject({ users: 0, observations: 2 });
    const { teamId, userId } = await idsOf(b);
    expect(
      await env.DB.prepare('SELECT COUNT(*) AS n FROM users WHERE team_id = ? AND handle = ?')
        .bind(teamId, a.id.user)
        .first<{ n: number }>(),
    ).toEqual({ n: 0 });
    const rows = await env.DB.prepare(
      'SELECT DISTINCT author_user_id AS author, imported_author AS named FROM observations WHERE team_id = ?',
    )
      .bind(teamId)
      .all<{ author: number; named: string }>();
    expect(rows.results).toEqual([{ author: userId, named: a.id.user }]);
    const platform = await env.DB.prepare(
      'SELECT platform, user_id, imported_at IS NOT NULL AS imported FROM sessions WHERE team_id = ?',
    )
      .bind(teamId)
      .first<{ platform: string; user_id: number; imported: number }>();
    expect(platform).toEqual({ platform: 'claude-code', user_id: userId, imported: 1 });
  });

  it('refuses a file with a bad line and stores none of it', async () => {
    const a = await source();
    const lines = (await (await exportOf(a.id.token, a.key)).text()).trim().split('\n');
    lines.splice(3, 0, '{"kind":"observation","title":42}');
    const b = await newIdentity();
    const res = await importInto(b.token, lines.join('\n'));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'invalid_record',
      message: expect.stringContaining('Line 4'),
    });
    const { teamId } = await idsOf(b);
    expect(
      await env.DB.prepare('SELECT COUNT(*) AS n FROM observations WHERE team_id = ?')
        .bind(teamId)
        .first<{ n: number }>(),
    ).toEqual({ n: 0 });
    expect(
      await env.DB.prepare('SELECT COUNT(*) AS n FROM projects WHERE team_id = ?').bind(teamId).first<{ n: number }>(),
    ).toEqual({ n: 0 });
  });

  it('answers an unknown project with 404 and refuses members', async () => {
    const a = await source();
    expect((await exportOf(a.id.token, `github.com/nobody/${fresh('x')}`)).status).toBe(404);
    const member = await newIdentity({ team: a.id.team, role: 'member' });
    expect((await exportOf(member.token)).status).toBe(403);
  });
});
