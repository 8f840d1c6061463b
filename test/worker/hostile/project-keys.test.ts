// Issue 14, rows 8–11: keys the server makes (`local/…`, `<key>#<handle>`, `manual:` sessions) cannot be
// made, taken or guessed by clients, and a rename never reveals a teammate's private project.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, fresh } from '../support/http';
import { idsOf } from '../support/seed';
import { initEvent, send, toolEvent } from '../pipeline/support';
import { addTeammate, errorCode, json, newOwner } from '../teams/support';

const projectOf = async (teamId: number, sessionKey: string) =>
  env.DB.prepare(
    'SELECT p.key, p.visibility, p.owner_user_id FROM sessions s JOIN projects p ON p.id = s.project_id WHERE s.team_id = ? AND s.session_key = ?',
  )
    .bind(teamId, sessionKey)
    .first<{ key: string; visibility: string; owner_user_id: number }>();

describe('project keys the server makes', () => {
  it('never files a private shadow write in a team project a teammate named <key>#<handle> (row 8)', async () => {
    const owner = await newOwner();
    const { teamId } = await idsOf(owner);
    const mia = await addTeammate(owner, fresh('mia'));
    const bob = await addTeammate(owner, fresh('bob'));
    const key = `github.com/${fresh('acme')}/secret`;
    // The owner's private project under `key`.
    await send(owner.token, 'init', initEvent(fresh('s'), 'start', { project: key }));
    await json(
      await call('/api/admin/projects/visibility', { token: owner.token, json: { key, visibility: 'private' } }),
    );
    // Bob creates what would be mia's shadow key as a team project.
    const bobSession = fresh('s');
    await send(bob.token, 'init', initEvent(bobSession, 'trap', { project: `${key}#${mia.user}` }));
    expect((await projectOf(teamId, bobSession))!.key).toBe(`${key}%23${mia.user}`);
    // Mia writes under the private key: her own private shadow, not bob's project.
    const miaSession = fresh('s');
    await send(mia.token, 'init', initEvent(miaSession, 'my private work', { project: key }));
    const mine = await projectOf(teamId, miaSession);
    expect(mine).toMatchObject({ key: `${key}#${mia.user}`, visibility: 'private' });
    const miaIds = await env.DB.prepare('SELECT user_id FROM tokens WHERE id = ?')
      .bind(mia.token_id)
      .first<{ user_id: number }>();
    expect(mine!.owner_user_id).toBe(miaIds!.user_id);
    // Bob's search by the shadow key finds nothing of mia's.
    const found = await json<{ results: unknown[] }>(
      await call(`/api/search?q=private&project=${encodeURIComponent(`${key}#${mia.user}`)}`, { token: bob.token }),
    );
    expect(found.results).toEqual([]);
  });

  it('refuses to rename or merge a team project into local/… or a # key (row 9), and keeps a local/ write private', async () => {
    const owner = await newOwner();
    const { teamId } = await idsOf(owner);
    const mia = await addTeammate(owner, fresh('mia'));
    const key = `github.com/${fresh('acme')}/team`;
    await send(owner.token, 'init', initEvent(fresh('s'), 'start', { project: key }));
    for (const [path, body] of [
      ['/api/admin/projects/rename', { from: key, to: `local/${mia.user}/app` }],
      ['/api/admin/projects/rename', { from: key, to: `${key}#${mia.user}` }],
      ['/api/admin/projects/merge', { from: key, into: `local/${mia.user}/app` }],
    ] as const) {
      const res = await call(path, { token: owner.token, json: body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await errorCode(res)).toBe('reserved_project_key');
    }
    const sid = fresh('s');
    await send(mia.token, 'init', initEvent(sid, 'note to self', { project: 'local/app' }));
    expect(await projectOf(teamId, sid)).toMatchObject({ key: `local/${mia.user}/app`, visibility: 'private' });
  });

  it("answers a rename onto a teammate's private key exactly as onto a visible one, never 200 vs 409 by privacy (row 10)", async () => {
    const owner = await newOwner();
    const mia = await addTeammate(owner, fresh('mia'));
    const mine = `github.com/${fresh('acme')}/mine`;
    const hers = `github.com/${fresh('acme')}/hers`;
    const visible = `github.com/${fresh('acme')}/shared`;
    await send(owner.token, 'init', initEvent(fresh('s'), 'a', { project: mine }));
    await send(owner.token, 'init', initEvent(fresh('s'), 'b', { project: visible }));
    await send(mia.token, 'init', initEvent(fresh('s'), 'c', { project: hers }));
    await env.DB.prepare("UPDATE projects SET visibility = 'private' WHERE key = ?").bind(hers).run();
    const ontoPrivate = await call('/api/admin/projects/rename', {
      token: owner.token,
      json: { from: mine, to: hers },
    });
    const ontoVisible = await call('/api/admin/projects/rename', {
      token: owner.token,
      json: { from: mine, to: visible },
    });
    expect(ontoPrivate.status).toBe(ontoVisible.status);
    const [a, b] = [await ontoPrivate.json(), await ontoVisible.json()];
    expect(a).toEqual(b);
    expect(a).toMatchObject({ error: { code: 'project_key_unavailable' } });
  });

  it('refuses client session ids starting with manual: on the single and the batch route (row 11)', async () => {
    const owner = await newOwner();
    const { teamId } = await idsOf(owner);
    const mia = await addTeammate(owner, fresh('mia'));
    const key = `github.com/${fresh('acme')}/w`;
    await send(mia.token, 'init', initEvent(fresh('s'), 'start', { project: key }));
    const project = await env.DB.prepare('SELECT id FROM projects WHERE team_id = ? AND key = ?')
      .bind(teamId, key)
      .first<{ id: number }>();
    const miaUser = await env.DB.prepare('SELECT user_id FROM tokens WHERE id = ?')
      .bind(mia.token_id)
      .first<{ user_id: number }>();
    const forged = `manual:${project!.id}:${miaUser!.user_id}`;
    const single = await send(owner.token, 'observations', toolEvent(forged, 'ls', { project: key }));
    expect(single.status).toBe(400);
    expect((single.body as { error: { code: string } }).error.code).toBe('invalid_body');
    const batch = await json<{ results: Array<{ error?: { code: string } }> }>(
      await call('/api/events/batch', {
        token: owner.token,
        json: { events: [{ kind: 'init', ...initEvent(forged, 'x', { project: key }) }] },
      }),
    );
    expect(batch.results[0]!.error?.code).toBe('invalid_body');
    const row = await env.DB.prepare('SELECT COUNT(*) AS n FROM sessions WHERE team_id = ? AND session_key = ?')
      .bind(teamId, forged)
      .first<{ n: number }>();
    expect(row!.n).toBe(0);
  });

  it('does not borrow a manual session row that someone else made before the rule', async () => {
    const owner = await newOwner();
    const ownerIds = await idsOf(owner);
    const mia = await addTeammate(owner, fresh('mia'));
    const key = `github.com/${fresh('acme')}/w`;
    await send(mia.token, 'init', initEvent(fresh('s'), 'start', { project: key }));
    const project = await env.DB.prepare('SELECT id FROM projects WHERE team_id = ? AND key = ?')
      .bind(ownerIds.teamId, key)
      .first<{ id: number }>();
    const miaUser = await env.DB.prepare('SELECT user_id FROM tokens WHERE id = ?')
      .bind(mia.token_id)
      .first<{ user_id: number }>();
    await env.DB.prepare(
      "INSERT INTO sessions (team_id, session_key, project_id, user_id, platform, started_at) VALUES (?, ?, ?, ?, 'claude-code', ?)",
    )
      .bind(ownerIds.teamId, `manual:${project!.id}:${miaUser!.user_id}`, project!.id, ownerIds.userId, Date.now())
      .run();
    const res = await call('/mcp', {
      token: mia.token,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'remember', arguments: { project: key, text: 'mine, not theirs' } },
      }),
    });
    const answer = (await res.json()) as { result: { isError?: boolean; content: { text: string }[] } };
    expect(answer.result.isError).toBe(true);
    expect(answer.result.content[0]!.text).toMatch(/^session_conflict/);
    const stored = await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM observations WHERE team_id = ? AND narrative = 'mine, not theirs'",
    )
      .bind(ownerIds.teamId)
      .first<{ n: number }>();
    expect(stored!.n).toBe(0);
  });
});
