// Capture policy (issue 38) on the real stack: an admin sets `capture` for the team and per project; a member's next
// session start is told the effective mode (header of GET /api/context), and ingest of an `off` project stores
// nothing whatever the client does (acked skipped "capture_off": no project, session, prompt or buffered event).
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, fresh, newIdentity, type TestIdentity } from '../support/http';
import { d1Holding, objectHolding, secretWord } from '../support/storage-scan';
import { errorCode, json } from '../versions/support';

/** A team of its own (settings are the team's) with an owner and a member holding a device token. */
async function team(): Promise<{ owner: TestIdentity; member: TestIdentity; teamId: number }> {
  const owner = await newIdentity({ role: 'owner' });
  const user = fresh('u').replace(/-/g, '');
  expect((await call('/api/admin/users', { token: owner.token, json: { handle: user, role: 'member' } })).status).toBe(
    201,
  );
  const { token } = await json<{ token: string }>(
    await call('/api/admin/devices', {
      token: owner.token,
      json: { user, name: `${user}-laptop`, scopes: ['ingest', 'read'] },
    }),
    201,
  );
  const row = await env.DB.prepare('SELECT id FROM teams WHERE slug = ?').bind(owner.team).first<{ id: number }>();
  return { owner, member: { token, team: owner.team, user, device: `${user}-laptop` }, teamId: row!.id };
}

const settings = (token: string, patch: Record<string, unknown>) =>
  call('/api/admin/settings', { token, method: 'PATCH', json: patch });

/** What a session start is told for `project`: the capture header of the context answer. */
async function sessionStartMode(token: string, project: string): Promise<string | null> {
  const res = await call(`/api/context?project=${encodeURIComponent(project)}`, { token });
  expect(res.status).toBe(200);
  return res.headers.get('x-cairn-capture');
}

const ev = (session: string, project: string, extra: Record<string, unknown>) => ({
  event_id: fresh('ev'),
  session_id: session,
  project,
  cwd: '/work/app',
  occurred_at: Date.now(),
  ...extra,
});

/** A prompt, a tool call and a summary of one session as an old client sends them, whatever the policy. */
async function session(token: string, project: string, word: string) {
  const sid = fresh('s');
  const res = await call('/api/events/batch', {
    token,
    json: {
      events: [
        { kind: 'init', ...ev(sid, project, { prompt: `Please look at ${word}` }) },
        {
          kind: 'observation',
          ...ev(sid, project, { tool_name: 'Bash', tool_input: { command: `grep ${word}` }, tool_response: word }),
        },
        { kind: 'summarize', ...ev(sid, project, { last_assistant_message: `Found ${word}` }) },
      ],
    },
  });
  const body = await json<{ results: { accepted: boolean; skipped?: string }[] }>(res);
  const single = await json<{ accepted: boolean; skipped?: string }>(
    await call('/api/sessions/observations', {
      token,
      json: ev(sid, project, { tool_name: 'Read', tool_input: { file_path: `/work/app/${word}.ts` } }),
    }),
    202,
  );
  return { sid, acks: [...body.results, single].map((a) => a.skipped ?? (a.accepted ? 'accepted' : 'refused')) };
}

const count = async (sql: string, ...args: unknown[]) =>
  (await env.DB.prepare(sql)
    .bind(...args)
    .first<{ n: number }>())!.n;

describe('capture policy', { timeout: 60_000 }, () => {
  it("stops a member's capture at their next session start when an admin sets it off, and ingest stores nothing", async () => {
    const { owner, member, teamId } = await team();
    const project = `github.com/acme/${fresh('app')}`;
    expect(await sessionStartMode(member.token, project)).toBe('on');

    await json(await settings(owner.token, { capture: 'off' }));
    expect(await sessionStartMode(member.token, project)).toBe('off');
    // The index with a checkout report (a git checkout's session start) says the same.
    const posted = await call('/api/context', { token: member.token, json: { project } });
    expect(posted.status).toBe(200);
    expect(posted.headers.get('x-cairn-capture')).toBe('off');

    // An old client that ignores the header: every event acked skipped, and nothing of it anywhere.
    const word = secretWord();
    const { sid, acks } = await session(member.token, project, word);
    expect(acks).toEqual(['capture_off', 'capture_off', 'capture_off', 'capture_off']);
    expect(await count('SELECT COUNT(*) AS n FROM sessions WHERE session_key = ?', sid)).toBe(0);
    expect(await count('SELECT COUNT(*) AS n FROM projects WHERE key = ?', project)).toBe(0);
    expect(await d1Holding(word)).toEqual([]);
    expect(await objectHolding(teamId, sid, word)).toEqual([]);
    // The member's own private project too: the team records nothing.
    expect((await session(member.token, 'local/scratch', secretWord())).acks[0]).toBe('capture_off');

    // Back on (null removes the key): the same member's sessions are stored again.
    await json(await settings(owner.token, { capture: null }));
    expect(await sessionStartMode(member.token, project)).toBe('on');
    const again = await session(member.token, project, secretWord());
    expect(again.acks).toEqual(['accepted', 'accepted', 'accepted', 'accepted']);
    expect(await count('SELECT COUNT(*) AS n FROM sessions WHERE session_key = ?', again.sid)).toBe(1);
  });

  it("combines a project's own mode with the team's, the more restrictive winning, under a renamed project's old key too", async () => {
    const { owner, member } = await team();
    const quiet = `github.com/acme/${fresh('quiet')}`;
    const asked = `github.com/acme/${fresh('asked')}`;
    const open = `github.com/acme/${fresh('open')}`;
    await json(await settings(owner.token, { capture: 'ask', capture_projects: { [quiet]: 'off', [open]: 'on' } }));
    expect(await sessionStartMode(member.token, quiet)).toBe('off');
    expect(await sessionStartMode(member.token, asked)).toBe('ask');
    // The team asks: a project's `on` does not lift it.
    expect(await sessionStartMode(member.token, open)).toBe('ask');
    // `ask` is the client's to ask; the server takes what an answered client sends.
    expect((await session(member.token, asked, secretWord())).acks[0]).toBe('accepted');
    expect((await session(member.token, quiet, secretWord())).acks).toEqual([
      'capture_off',
      'capture_off',
      'capture_off',
      'capture_off',
    ]);

    // A project renamed after the policy was set: clients still send the old key, which is its alias now.
    expect((await session(owner.token, open, secretWord())).acks[0]).toBe('accepted');
    const renamed = `github.com/acme/${fresh('renamed')}`;
    await json(await call('/api/admin/projects/rename', { token: owner.token, json: { from: open, to: renamed } }));
    await json(await settings(owner.token, { capture_projects: { [renamed]: 'off' } }));
    expect(await sessionStartMode(member.token, open)).toBe('off');
    const word = secretWord();
    expect((await session(member.token, open, word)).acks[0]).toBe('capture_off');
    expect(await d1Holding(word)).toEqual([]);
  });

  it('refuses bad values with 400 and a member with 403, and changes nothing', async () => {
    const { owner, member } = await team();
    await json(await settings(owner.token, { capture: 'ask' }));
    for (const bad of [
      { capture: 'maybe' },
      { capture: true },
      { capture_projects: { 'github.com/a/b': 'sometimes' } },
      { capture_projects: ['github.com/a/b'] },
      { capture_projects: { 'github.com/a/\u001b[2J': 'off' } },
      { capture_projects: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`github.com/a/p${i}`, 'off'])) },
    ]) {
      const res = await settings(owner.token, bad);
      expect(res.status, JSON.stringify(bad).slice(0, 80)).toBe(400);
      expect(await errorCode(res)).toBe('invalid_body');
    }
    for (const patch of [{ capture: 'on' }, { capture_projects: { 'github.com/a/b': 'on' } }]) {
      const res = await settings(member.token, patch);
      expect(res.status).toBe(403);
    }
    const { settings: now } = await json<{ settings: Record<string, unknown> }>(
      await call('/api/admin/settings', { token: owner.token }),
    );
    expect(now.capture).toBe('ask');
    expect(now.capture_projects).toBeUndefined();
  });
});
