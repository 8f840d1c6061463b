// Who may write (issue 38) on the real stack: a reader reads the team's memory but their sessions store nothing in
// a team project (no session row, no prompt, no buffered event), while their own private project is theirs; a
// project's `project_writers` list is kept by every path in: hook events, MCP remember, prime, import, edit.
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, fresh, newIdentity, type TestIdentity } from '../support/http';
import { importNow } from '../support/import';
import { d1Holding, secretWord } from '../support/storage-scan';
import { errorCode, json, remember, textOf, tool } from '../versions/support';

let owner: TestIdentity;
beforeAll(async () => {
  owner = await newIdentity({ role: 'owner' });
});

/** A teammate with `role` and a device token (ingest, read) of their own. */
async function teammate(role: 'member' | 'admin' | 'reader'): Promise<TestIdentity> {
  const user = fresh('u').replace(/-/g, '');
  expect((await call('/api/admin/users', { token: owner.token, json: { handle: user, role } })).status).toBe(201);
  const res = await call('/api/admin/devices', {
    token: owner.token,
    json: { user, name: `${user}-laptop`, scopes: ['ingest', 'read'] },
  });
  const { token } = await json<{ token: string }>(res, 201);
  return { token, team: owner.team, user, device: `${user}-laptop` };
}

const ev = (session: string, project: string, extra: Record<string, unknown>) => ({
  event_id: fresh('ev'),
  session_id: session,
  project,
  cwd: '/work/app',
  occurred_at: Date.now(),
  ...extra,
});

/** A prompt and a tool call of one session, through the batch route; answers each event's ack. */
async function hooks(token: string, project: string, words: string) {
  const session = fresh('s');
  const res = await call('/api/events/batch', {
    token,
    json: {
      events: [
        { kind: 'init', ...ev(session, project, { prompt: `Please look at ${words}` }) },
        {
          kind: 'observation',
          ...ev(session, project, {
            tool_name: 'Bash',
            tool_input: { command: `grep ${words}` },
            tool_response: { stdout: words },
          }),
        },
      ],
    },
  });
  const body = await json<{ results: { accepted: boolean; skipped?: string }[] }>(res);
  const row = await env.DB.prepare('SELECT COUNT(*) AS n FROM sessions WHERE session_key = ?')
    .bind(session)
    .first<{ n: number }>();
  return { acks: body.results, sessionRows: row?.n ?? 0 };
}

const prime = (token: string, project: string) =>
  call('/api/prime', {
    token,
    json: { project, notes: [{ kind: 'docs', title: `Setup ${fresh('d')}`, text: 'Run npm ci, then npm start.' }] },
  });

describe('the reader role', { timeout: 60_000 }, () => {
  it("stores nothing of a reader's session in a team project, and keeps what they write in their own project", async () => {
    const reader = await teammate('reader');
    const project = `github.com/acme/${fresh('app')}`;
    const word = secretWord();
    await remember(owner.token, project, `Deploy notes ${word}`, 'Deploys go through the pipeline.');

    // Reads: the team's memory is theirs to read.
    const ctx = await (
      await call(`/api/context?project=${encodeURIComponent(project)}`, { token: reader.token })
    ).text();
    expect(ctx).toContain(`Deploy notes ${word}`);

    // Writes into the team project: every event skipped, no session row, no prompt; remember and prime refused.
    const readerWord = secretWord();
    const out = await hooks(reader.token, project, readerWord);
    expect(out.acks.map(({ accepted, skipped }) => ({ accepted, skipped }))).toEqual([
      { accepted: false, skipped: 'reader' },
      { accepted: false, skipped: 'reader' },
    ]);
    expect(out.sessionRows).toBe(0);
    expect(await d1Holding(readerWord)).toEqual([]);
    const r = await tool(reader.token, 'remember', { project, title: 'Mine', text: 'A reader note.' });
    expect(textOf(r)).toMatch(/^reader_role:/);
    const p = await prime(reader.token, project);
    expect(p.status).toBe(403);
    expect(await errorCode(p)).toBe('reader_role');
    // A key no one has used yet is not made into a team project by a reader either.
    const fresher = `github.com/acme/${fresh('new')}`;
    expect((await hooks(reader.token, fresher, secretWord())).acks[0]?.skipped).toBe('reader');
    const made = await env.DB.prepare('SELECT COUNT(*) AS n FROM projects WHERE key = ?')
      .bind(fresher)
      .first<{ n: number }>();
    expect(made?.n).toBe(0);

    // Their own private project (a folder without a remote) is theirs: stored.
    const mine = await hooks(reader.token, 'local/scratch', secretWord());
    expect(mine.acks.map((a) => a.accepted)).toEqual([true, true]);
    expect(mine.sessionRows).toBe(1);
    expect(
      (await tool(reader.token, 'remember', { project: 'local/scratch', title: 'Mine', text: 'Note.' })).isError,
    ).toBeFalsy();
  });

  it('gives a reader no admin scope, and demoting someone to reader takes admin from their tokens', async () => {
    const reader = await teammate('reader');
    const res = await call('/api/admin/devices', {
      token: owner.token,
      json: { user: reader.user, name: 'x', scopes: ['ingest', 'read', 'admin'] },
    });
    expect(res.status).toBe(400);
    expect(await errorCode(res)).toBe('scope_not_allowed');
    const admin = await teammate('admin');
    await json(
      await call('/api/admin/devices', {
        token: owner.token,
        json: { user: admin.user, name: 'admin-box', scopes: ['ingest', 'read', 'admin'] },
      }),
      201,
    );
    await json(
      await call(`/api/admin/users/${admin.user}`, { token: owner.token, method: 'PATCH', json: { role: 'reader' } }),
    );
    const scopes = await env.DB.prepare(
      'SELECT t.scopes FROM tokens t JOIN users u ON u.id = t.user_id WHERE u.handle = ? AND t.revoked_at IS NULL',
    )
      .bind(admin.user)
      .all<{ scopes: string }>();
    expect(scopes.results.map((s) => s.scopes)).toEqual(['ingest,read', 'ingest,read']);
    const users = await json<{ users: { handle: string; role: string }[] }>(
      await call('/api/admin/users', { token: owner.token }),
    );
    expect(users.users.find((u) => u.handle === admin.user)?.role).toBe('reader');
  });
});

describe('project_writers', { timeout: 60_000 }, () => {
  it('lets only the listed members put records into the project, on hooks, MCP, prime, import and edit', async () => {
    const writer = await teammate('member');
    const other = await teammate('member');
    const admin = await teammate('admin');
    const project = `github.com/acme/${fresh('locked')}`;
    const open = `github.com/acme/${fresh('open')}`;
    const before = await remember(other.token, project, `Written before the list ${fresh('b')}`, 'Old note.');
    await json(
      await call('/api/admin/settings', {
        token: owner.token,
        method: 'PATCH',
        json: { project_writers: { [project]: [writer.user, owner.user] } },
      }),
    );

    // A listed member writes as before.
    expect((await hooks(writer.token, project, secretWord())).acks.map((a) => a.accepted)).toEqual([true, true]);
    expect(await remember(writer.token, project, `Listed ${fresh('l')}`, 'Fine.')).toBeGreaterThan(0);

    // Anyone else: hook events skipped (no session row), remember, prime and edit refused.
    const word = secretWord();
    const out = await hooks(other.token, project, word);
    expect(out.acks.map((a) => a.skipped)).toEqual(['not_a_writer', 'not_a_writer']);
    expect(out.sessionRows).toBe(0);
    expect(await d1Holding(word)).toEqual([]);
    expect(textOf(await tool(other.token, 'remember', { project, title: 'x', text: 'y' }))).toMatch(
      /^not_a_project_writer:/,
    );
    const p = await prime(other.token, project);
    expect(p.status).toBe(403);
    expect(await errorCode(p)).toBe('not_a_project_writer');
    const e = await call('/api/corrections/edit', { token: other.token, json: { id: before, title: 'Changed' } });
    expect(e.status).toBe(403);
    expect(await errorCode(e)).toBe('not_a_project_writer');

    // An admin's import names the project on a line: refused whole, nothing stored.
    const admin2 = await json<{ token: string }>(
      await call('/api/admin/devices', {
        token: owner.token,
        json: { user: admin.user, name: 'admin-import', scopes: ['ingest', 'read', 'admin'] },
      }),
      201,
    );
    const s = fresh('imp');
    const file = [
      { kind: 'project', key: project, visibility: 'team', owner: null, created_at: Date.now() },
      {
        kind: 'session',
        session_key: s,
        project,
        user: admin.user,
        platform: 'claude-code',
        prompt_count: 1,
        started_at: Date.now(),
        ended_at: null,
      },
      {
        kind: 'prompt',
        session_key: s,
        prompt_number: 1,
        prompt_id: null,
        author: admin.user,
        created_at: Date.now(),
        text: `imported ${word}`,
      },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n');
    const imp = await importNow(admin2.token, `${file}\n`);
    expect(imp.status).toBe(403);
    expect(((await imp.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'not_a_project_writer',
      message: expect.stringContaining('Line 1'),
    });
    expect(await d1Holding(word)).toEqual([]);

    // Other projects and the member's own private project are unaffected.
    expect((await hooks(other.token, open, secretWord())).acks.map((a) => a.accepted)).toEqual([true, true]);
    expect((await hooks(other.token, 'local/mine', secretWord())).acks.map((a) => a.accepted)).toEqual([true, true]);
  });

  it('refuses a malformed list with 400 and changes nothing', async () => {
    for (const bad of [
      { x: 'ana' },
      { x: ['bad handle!'] },
      ['github.com/a/b'],
      { 'github.com/a/\u001b[2J': ['ana'] },
    ]) {
      const res = await call('/api/admin/settings', {
        token: owner.token,
        method: 'PATCH',
        json: { project_writers: bad },
      });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(await errorCode(res)).toBe('invalid_body');
    }
  });
});
