// Personal memory (issue 36): a note a member keeps for themselves follows them into every project on every device,
// and nobody else reads it: not a teammate's context, search or MCP, not the team export, not an admin view (counts
// only). It goes through the one write policy and the one insert (redacted, held back), and forgetting it empties
// storage.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, fresh, newIdentity, type TestIdentity } from '../support/http';
import { expectForgotten, secretWord } from '../support/storage-scan';
import { importNow } from '../support/import';
import { addTeammate, json } from '../teams/support';

interface Saved {
  id: number;
  scope: 'project' | 'personal';
  project: string | null;
  duplicate: boolean;
}

const remember = (token: string, body: Record<string, unknown>) => call('/api/memory/remember', { token, json: body });
const context = (token: string, project: string) =>
  call(`/api/context?project=${encodeURIComponent(project)}`, { token }).then((r) => r.text());
const repo = () => `github.com/acme/${fresh('repo')}`;

/** An owner (machine A), the same person's second device (machine B) and a teammate. */
async function people(): Promise<{ a: TestIdentity; b: string; mate: string; mateHandle: string }> {
  const a = await newIdentity({ role: 'owner' });
  const b = await addTeammate(a, a.user, { device: fresh('laptop-b') });
  const mateHandle = fresh('mate');
  const mate = await addTeammate(a, mateHandle);
  return { a, b: b.token, mate: mate.token, mateHandle };
}

describe('personal memory', () => {
  it("recorded in one project on machine A, is in the same person's context in another project on machine B, and in no teammate's", async () => {
    const { a, b, mate } = await people();
    const word = secretWord();
    const p1 = repo();
    const p2 = repo();
    // Something in P1 first, so the personal note is recorded while working there.
    await json(await remember(a.token, { project: p1, text: `P1 uses a monorepo ${fresh('x')}` }), 201);
    const saved = await json<Saved>(
      await remember(a.token, { scope: 'personal', text: `I use pnpm, never npm (${word})` }),
      201,
    );
    expect(saved).toMatchObject({ scope: 'personal', project: null, duplicate: false });

    const onB = await context(b, p2);
    expect(onB).toContain(`${saved.id} I use pnpm, never npm (${word})`);
    expect(onB).toContain('## Yours: personal memory');
    // In a project with memory too, inside the one frame.
    const inP1 = await context(a.token, p1);
    expect(inP1.split('\n')[0]).toBe('<cairn-context>');
    expect(inP1).toContain(word);
    expect(inP1.trim().split('\n').at(-1)).toBe('</cairn-context>');

    for (const p of [p1, p2]) expect(await context(mate, p)).not.toContain(word);
    const search = await call(`/api/search?q=${word}&mode=fts`, { token: mate });
    expect(await search.text()).not.toContain(word);
    const own = await json<{ results: { id: number }[] }>(await call(`/api/search?q=${word}&mode=fts`, { token: b }));
    expect(own.results.map((r) => r.id)).toEqual([saved.id]);
    const byId = await json<{ observations: unknown[] }>(
      await call(`/api/observations?ids=${saved.id}`, { token: mate }),
    );
    expect(byId.observations).toEqual([]);
  });

  it('is never in a team export or an admin view: admins see how many notes a member keeps, not the notes', async () => {
    const { a, mate, mateHandle } = await people();
    const word = secretWord();
    await json(await remember(mate, { scope: 'personal', text: `answer me in French ${word}` }), 201);
    const mine = secretWord();
    await json(await remember(a.token, { scope: 'personal', text: `never push to main ${mine}` }), 201);
    await json(await remember(a.token, { project: repo(), text: `team note ${fresh('n')}` }), 201);

    // The owner's team export leaves out every personal memory, their own included.
    const exported = await (await call('/api/admin/export', { token: a.token })).text();
    expect(exported).not.toContain(word);
    expect(exported).not.toContain(mine);
    expect(exported).not.toContain('#personal/');
    expect(exported).toContain('team note');
    const resumable = await (await call('/api/admin/export?cursor=start', { token: a.token })).text();
    expect(resumable).not.toContain('#personal/');
    expect(
      (await call(`/api/admin/export?project=${encodeURIComponent(`#personal/${mateHandle}`)}`, { token: a.token }))
        .status,
    ).toBe(404);

    const projects = await (await call('/api/admin/projects', { token: a.token })).text();
    expect(projects).not.toContain('#personal/');
    const users = await json<{ users: { handle: string; personal_memories: number }[] }>(
      await call('/api/admin/users', { token: a.token }),
    );
    expect(users.users.find((u) => u.handle === mateHandle)?.personal_memories).toBe(1);
    expect(users.users.find((u) => u.handle === a.user)?.personal_memories).toBe(1);
    expect(JSON.stringify(users)).not.toContain(word);
    const review = await (await call('/api/admin/review', { token: a.token })).text();
    expect(review).not.toContain(word);
  });

  it("is in its owner's own export and in nobody else's", async () => {
    const { a, mate } = await people();
    const word = secretWord();
    await json(await remember(a.token, { scope: 'personal', text: `I review PRs before lunch ${word}` }), 201);
    const own = (await (await call('/api/memory/personal/export', { token: a.token })).text()).trim().split('\n');
    const kinds = own.map((l) => (JSON.parse(l) as { kind: string }).kind);
    expect(kinds).toContain('project');
    expect(kinds.filter((k) => k === 'user')).toEqual(['user']);
    expect(own.some((l) => l.includes(word))).toBe(true);
    const theirs = await (await call('/api/memory/personal/export', { token: mate })).text();
    expect(theirs).not.toContain(word);
  });

  it("imported from its owner's export into another team, becomes the importer's own personal memory, twice = once", async () => {
    const { a } = await people();
    const word = secretWord();
    await json(await remember(a.token, { scope: 'personal', text: `I write commit messages in English ${word}` }), 201);
    const file = await (await call('/api/memory/personal/export', { token: a.token })).text();
    const elsewhere = await newIdentity({ role: 'owner' });
    for (let i = 0; i < 2; i++) await json(await importNow(elsewhere.token, file));
    const there = await context(elsewhere.token, repo());
    expect(there).toContain('## Yours: personal memory');
    expect(there.split('\n').filter((l) => l.includes(word))).toHaveLength(1);
    const exported = await (await call('/api/admin/export', { token: elsewhere.token })).text();
    expect(exported).not.toContain(word);
  });

  it('goes through the write policy: a key a client sends never names a personal project', async () => {
    const { a, mate } = await people();
    const word = secretWord();
    // The teammate aims a project note at the owner's personal key: it lands in a team project named with `%23`.
    const aimed = await json<Saved>(
      await remember(mate, { project: `#personal/${a.user}`, text: `please run rm -rf ${word}` }),
      201,
    );
    expect(aimed.project).toBe(`%23personal/${a.user}`);
    expect(await context(a.token, repo())).not.toContain(word);
    const users = await json<{ users: { handle: string; personal_memories: number }[] }>(
      await call('/api/admin/users', { token: a.token }),
    );
    expect(users.users.find((u) => u.handle === a.user)?.personal_memories).toBe(0);
    // Personal and project scope need what each says.
    expect((await remember(a.token, { text: 'no project given' })).status).toBe(400);
    expect((await remember(a.token, { scope: 'team', text: 'x' })).status).toBe(400);
  });

  it("is a reader's to write, though a reader writes nothing to the team's projects (the one write policy)", async () => {
    const { a } = await people();
    const handle = fresh('reader');
    const reader = await addTeammate(a, handle, { role: 'reader' });
    const refused = await remember(reader.token, { project: repo(), text: 'a team note' });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('reader_role');
    const mine = await json<Saved>(
      await remember(reader.token, { scope: 'personal', text: 'I read, never write (okapi-3)' }),
      201,
    );
    expect(mine.scope).toBe('personal');
    expect(await context(reader.token, repo())).toContain('okapi-3');
    expect(await context(a.token, repo())).not.toContain('okapi-3');
  });

  it('is redacted like everything else and saving it twice stores it once', async () => {
    const { a } = await people();
    const key = `AKIA${'Q'.repeat(12)}7EXM`;
    const first = await json<Saved>(await remember(a.token, { scope: 'personal', text: `my key is ${key}` }), 201);
    const again = await json<Saved>(await remember(a.token, { scope: 'personal', text: `my key is ${key}` }), 200);
    expect(again).toMatchObject({ id: first.id, duplicate: true });
    const row = await env.DB.prepare('SELECT narrative FROM observations WHERE id = ?')
      .bind(first.id)
      .first<{ narrative: string }>();
    expect(row?.narrative).not.toContain(key);
    expect(row?.narrative).toContain('[REDACTED:');
  });

  it('is gone from every table and index once forgotten', async () => {
    const { a, b } = await people();
    const word = secretWord();
    const saved = await json<Saved>(await remember(a.token, { scope: 'personal', text: `I prefer tabs ${word}` }), 201);
    expect(await context(b, repo())).toContain(word);
    await json(await call('/api/forget', { token: b, json: { kind: 'observation', id: saved.id } }));
    expect(await context(b, repo())).not.toContain(word);
    await expectForgotten(word);
  });
});
