// Red-team pass on the write policy (issue 27): a key that is an old name (alias) of a teammate's private project
// is theirs as much as the project's own key. Before, a write under it by anyone else (an admin's import, any
// member's hook event) made a new team-visible project with that key, and from then on the owner's own writes
// under their old key (the repository's remote does not change when a project is renamed) landed in it, where
// the whole team reads them. Rows are read from D1.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { fresh } from '../support/http';
import { importNow } from '../support/import';
import { idsOf } from '../support/seed';
import { initEvent, send } from '../pipeline/support';
import { addTeammate, newOwner } from '../teams/support';

const T0 = Date.parse('2026-05-04T09:00:00Z');

/** A team whose member mia has a private project renamed from `old` to `now` (the old key kept as its alias). */
async function renamedPrivate() {
  const owner = await newOwner();
  const { teamId } = await idsOf(owner);
  const mia = await addTeammate(owner, fresh('mia'));
  const miaId = (await env.DB.prepare('SELECT id FROM users WHERE team_id = ? AND handle = ?')
    .bind(teamId, mia.user)
    .first<{ id: number }>())!.id;
  const [old, now] = [`github.com/${fresh('acme')}/app`, `github.com/${fresh('acme')}/app-renamed`];
  const p = await env.DB.prepare(
    "INSERT INTO projects (team_id, key, visibility, owner_user_id, created_at) VALUES (?, ?, 'private', ?, ?) RETURNING id",
  )
    .bind(teamId, now, miaId, T0)
    .first<{ id: number }>();
  await env.DB.prepare('INSERT INTO project_aliases (team_id, key, project_id, created_at) VALUES (?, ?, ?, ?)')
    .bind(teamId, old, p!.id, T0)
    .run();
  return { owner, mia, teamId, miaId, old, privateId: p!.id };
}

const projectOf = async (teamId: number, sessionKey: string) =>
  env.DB.prepare(
    'SELECT p.id, p.key, p.visibility, p.owner_user_id FROM sessions s JOIN projects p ON p.id = s.project_id WHERE s.team_id = ? AND s.session_key = ?',
  )
    .bind(teamId, sessionKey)
    .first<{ id: number; key: string; visibility: string; owner_user_id: number }>();

const teamProjectsWithKey = async (teamId: number, key: string) =>
  (await env.DB.prepare("SELECT COUNT(*) AS n FROM projects WHERE team_id = ? AND key = ? AND visibility = 'team'")
    .bind(teamId, key)
    .first<{ n: number }>())!.n;

describe("an old key of a teammate's private project", () => {
  it("is not made a team project by an admin's import, so the owner's writes under it stay in their private project", async () => {
    const t = await renamedPrivate();
    const line = { kind: 'project', key: t.old, visibility: 'team', owner: null, created_at: T0 };
    const res = await importNow(t.owner.token, JSON.stringify(line));
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await teamProjectsWithKey(t.teamId, t.old)).toBe(0);
    const sid = fresh('s');
    expect((await send(t.mia.token, 'init', initEvent(sid, 'my private work', { project: t.old }))).status).toBe(202);
    expect(await projectOf(t.teamId, sid)).toMatchObject({
      id: t.privateId,
      visibility: 'private',
      owner_user_id: t.miaId,
    });
  });

  it("is not made a team project by another member's hook event: theirs goes to their own private shadow", async () => {
    const t = await renamedPrivate();
    const theirs = fresh('s');
    expect((await send(t.owner.token, 'init', initEvent(theirs, 'squat', { project: t.old }))).status).toBe(202);
    expect(await projectOf(t.teamId, theirs)).toMatchObject({ key: `${t.old}#${t.owner.user}`, visibility: 'private' });
    const sid = fresh('s');
    expect((await send(t.mia.token, 'init', initEvent(sid, 'my private work', { project: t.old }))).status).toBe(202);
    expect(await projectOf(t.teamId, sid)).toMatchObject({
      id: t.privateId,
      visibility: 'private',
      owner_user_id: t.miaId,
    });
    expect(await teamProjectsWithKey(t.teamId, t.old)).toBe(0);
  });
});
