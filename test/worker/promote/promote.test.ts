// Promoting records into the repository's rules (issue 38) on the real stack: a promoted record is a version in its
// history, leaves the context index, file context and per-prompt context (the instruction file carries it now),
// stays in search marked promoted; only its author, or an admin acting with an admin-scoped token, may promote it;
// forget still removes it and its versions.
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { fresh, newIdentity, type TestIdentity } from '../support/http';
import { importNow } from '../support/import';
import { errorCode, json, remember, send, tool } from '../versions/support';

interface Team {
  owner: TestIdentity;
  a: TestIdentity;
  c: TestIdentity;
  project: string;
}
let t: Team;
beforeAll(async () => {
  const owner = await newIdentity({ role: 'owner' });
  const [a, c] = await Promise.all([
    newIdentity({ team: owner.team, role: 'member' }),
    newIdentity({ team: owner.team, role: 'member' }),
  ]);
  t = { owner, a, c, project: `github.com/acme/${fresh('repo')}` };
});

const q = (s: string) => encodeURIComponent(s);
const promote = (token: string, body: unknown) => send('/api/corrections/promote', { token, json: body });
type Found = { results: { id: number; promoted?: boolean; flagged?: boolean }[] };
const review = (id: number) =>
  env.DB.prepare('SELECT review FROM observation_signals WHERE observation_id = ?')
    .bind(id)
    .first<{ review: string }>();

describe('promote', { timeout: 60_000 }, () => {
  it('takes promoted records out of the context index and prompt context, keeps them in search marked promoted, as a version', async () => {
    const word = fresh('wombat').replace(/-/g, '');
    const title = `Run the ${word} migrations before the tests`;
    const id = await remember(
      t.a.token,
      t.project,
      title,
      `The ${word} suite needs the schema: npm run migrate first.`,
      {
        files: ['scripts/migrate.ts'],
      },
    );
    const other = await remember(
      t.a.token,
      t.project,
      `Keep ${word} fixtures small`,
      `The ${word} fixtures stay under 1 MB.`,
    );
    const contextOf = async (token: string) => (await send(`/api/context?project=${q(t.project)}`, { token })).text();
    const promptOf = async (token: string) =>
      (
        await send(`/api/context/prompt?project=${q(t.project)}&q=${q(`how do I run the ${word} migrations tests?`)}`, {
          token,
        })
      ).text();
    const fileOf = async (token: string) =>
      (await send(`/api/context/file?project=${q(t.project)}&path=scripts/migrate.ts`, { token })).text();
    expect(await contextOf(t.c.token)).toContain(title);
    expect(await promptOf(t.c.token)).toContain(title);
    expect(await fileOf(t.c.token)).toContain(title);

    const done = await json<{ promoted: number[]; already: number[]; to: string }>(
      await promote(t.a.token, { ids: [id], to: 'CLAUDE.md' }),
    );
    expect(done).toEqual({ promoted: [id], already: [], to: 'CLAUDE.md' });
    expect(await review(id)).toEqual({ review: 'promoted' });

    // Out of every context a session is given, for everyone; the other record stays.
    for (const token of [t.a.token, t.c.token]) {
      const context = await contextOf(token);
      expect(context).not.toContain(title);
      expect(context).toContain(`Keep ${word} fixtures small`);
      expect(await promptOf(token)).not.toContain(title);
      expect(await fileOf(token)).not.toContain(title);
    }
    // Still found, marked promoted (JSON and text); the other record carries no mark.
    const found = await json<Found>(
      await send(`/api/search?q=${word}&project=${q(t.project)}&mode=fts`, { token: t.c.token }),
    );
    expect(found.results.find((r) => r.id === id)).toMatchObject({ promoted: true });
    expect(found.results.find((r) => r.id === other)?.promoted).toBeUndefined();
    const text = await (
      await send(`/api/search?q=${word}&project=${q(t.project)}&mode=fts&format=text`, { token: t.c.token })
    ).text();
    expect(text).toMatch(new RegExp(`#${id} .*\\[promoted\\]`));

    // The history shows it as version 2, by the author, saying where it went.
    const h = await json<{
      version: number;
      versions: { version: number; action: string; who: string; reason: string }[];
    }>(await send(`/api/corrections/history?id=${id}`, { token: t.c.token }));
    expect(h.version).toBe(2);
    expect(h.versions[1]).toMatchObject({
      version: 2,
      action: 'promote',
      who: t.a.user,
      reason: 'promoted to CLAUDE.md',
    });

    // A second promote adds no version.
    const again = await json<{ promoted: number[]; already: number[] }>(await promote(t.a.token, { ids: [id, other] }));
    expect(again).toMatchObject({ promoted: [other], already: [id] });
    const h2 = await json<{ version: number }>(await send(`/api/corrections/history?id=${id}`, { token: t.a.token }));
    expect(h2.version).toBe(2);
  });

  it("refuses a member promoting a teammate's record, and lets an admin with the admin scope", async () => {
    const word = fresh('quoll').replace(/-/g, '');
    const mine = await remember(t.c.token, t.project, `Lint ${word} before push`, `Run the ${word} linter.`);
    const theirs = await remember(t.a.token, t.project, `Tag ${word} releases`, `Every ${word} release is tagged.`);
    // All or none: one record the caller may not promote leaves the other unpromoted too.
    const byMate = await promote(t.c.token, { ids: [mine, theirs] });
    expect(byMate.status).toBe(403);
    expect(await errorCode(byMate)).toBe('not_allowed');
    expect(await review(mine)).toBeNull();
    expect(await review(theirs)).toBeNull();
    const h = await json<{ version: number }>(
      await send(`/api/corrections/history?id=${theirs}`, { token: t.a.token }),
    );
    expect(h.version).toBe(1);
    // The owner's hook token (no admin scope) acts as a member; their admin-scoped token may.
    const ownerHook = await json<{ token: string }>(
      await send('/api/admin/devices', {
        token: t.owner.token,
        json: { name: fresh('hook'), scopes: ['ingest', 'read'] },
      }),
      201,
    );
    expect((await promote(ownerHook.token, { ids: [theirs] })).status).toBe(403);
    expect(await json(await promote(t.owner.token, { ids: [theirs] }))).toMatchObject({ promoted: [theirs] });
  });

  it('refuses bad requests with a stable code and changes nothing', async () => {
    const id = await remember(t.a.token, t.project, `Bad ${fresh('b')}`, 'Some text.');
    const old = await remember(t.a.token, t.project, `Old ${fresh('b')}`, 'Old text.');
    await json(
      await send('/api/corrections/supersede', { token: t.a.token, json: { id: old, by: id, reason: 'newer' } }),
    );
    const cases: [unknown, number, string][] = [
      [{ ids: [] }, 400, 'invalid_body'],
      [{ ids: [id], to: 'README.md' }, 400, 'invalid_body'],
      [{ ids: Array.from({ length: 21 }, (_, i) => i + 1) }, 400, 'invalid_body'],
      [{ ids: [id], extra: 1 }, 400, 'invalid_body'],
      [{ ids: [id, 999_999_999] }, 404, 'not_found'],
      [{ ids: [id, old] }, 409, 'not_current'],
    ];
    for (const [body, status, code] of cases) {
      const res = await promote(t.a.token, body);
      expect([res.status, await errorCode(res)], JSON.stringify(body)).toEqual([status, code]);
    }
    expect(await review(id)).toBeNull();
  });

  it('forget removes a promoted record with its versions and its promoted mark', async () => {
    const id = await remember(t.a.token, t.project, `Forget ${fresh('f')}`, 'To be forgotten.');
    await json(await promote(t.a.token, { ids: [id] }));
    await json(await send('/api/forget', { token: t.a.token, json: { kind: 'observation', id } }));
    const left = await env.DB.prepare(
      `SELECT (SELECT COUNT(*) FROM observations WHERE id = ?1) + (SELECT COUNT(*) FROM observation_events WHERE observation_id = ?1)
        + (SELECT COUNT(*) FROM observation_signals WHERE observation_id = ?1) AS n`,
    )
      .bind(id)
      .first<{ n: number }>();
    expect(left!.n).toBe(0);
  });

  it('lists as candidates the records used most and marked useful, never contradicted, that the caller may promote', async () => {
    const project = `github.com/acme/${fresh('cand')}`;
    const note = (token: string, title: string) => remember(token, project, `${title} ${fresh('n')}`, `${title}.`);
    const [useful, fetched, flagged, unused, promoted, mates] = [
      await note(t.a.token, 'Useful'),
      await note(t.a.token, 'Fetched'),
      await note(t.a.token, 'Flagged'),
      await note(t.a.token, 'Unused'),
      await note(t.a.token, 'Promoted'),
      await note(t.c.token, 'Mates'),
    ];
    const feedback = async (id: number, kind: string) =>
      json(await send('/api/corrections/feedback', { token: t.c.token, json: { id, kind } }));
    await feedback(useful, 'useful');
    await feedback(flagged, 'useful');
    await feedback(flagged, 'wrong');
    await feedback(promoted, 'useful');
    await feedback(mates, 'useful');
    expect((await tool(t.c.token, 'get_observations', { ids: [fetched] })).isError).toBeFalsy();
    await json(await promote(t.a.token, { ids: [promoted] }));
    const list = async (token: string) =>
      (
        await json<{ candidates: { id: number }[] }>(
          await send(`/api/corrections/promote/candidates?project=${q(project)}`, { token }),
        )
      ).candidates.map((c) => c.id);
    expect(await list(t.a.token)).toEqual([useful, fetched]);
    expect(await list(t.owner.token)).toEqual([mates, useful, fetched]);
    expect(unused).toBeGreaterThan(0);
    const unknown = await send(`/api/corrections/promote/candidates?project=${q('github.com/acme/none')}`, {
      token: t.a.token,
    });
    expect([unknown.status, await errorCode(unknown)]).toEqual([404, 'project_not_found']);
  });

  it('carries the promoted state and its version through an export into another team', async () => {
    const word = fresh('numbat').replace(/-/g, '');
    const project = `github.com/acme/${fresh('moved')}`;
    const title = `Pin the ${word} toolchain`;
    const id = await remember(t.a.token, project, title, `The ${word} toolchain is pinned in .tool-versions.`);
    await json(await promote(t.a.token, { ids: [id] }));
    const ndjson = await (await send(`/api/admin/export?project=${q(project)}`, { token: t.owner.token })).text();
    const b = await newIdentity({ user: t.a.user });
    expect((await importNow(b.token, ndjson)).status).toBe(200);
    const onB = await json<Found>(await send(`/api/search?q=${word}&mode=fts`, { token: b.token }));
    expect(onB.results).toHaveLength(1);
    expect(onB.results[0]).toMatchObject({ promoted: true });
    const context = await (await send(`/api/context?project=${q(project)}`, { token: b.token })).text();
    expect(context).not.toContain(title);
    const h = await json<{ versions: { action: string }[] }>(
      await send(`/api/corrections/history?id=${onB.results[0]!.id}`, { token: b.token }),
    );
    expect(h.versions.map((v) => v.action)).toEqual(['create', 'promote']);
  });
});
