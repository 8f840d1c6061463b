// Admin power needs the admin scope on every path: an admin's everyday token (a hook or MCP token, scopes `ingest`
// and `read`) acts on others' memory exactly as a member's would. Forgetting or superseding a teammate's record,
// forgetting their session or a team project, and reading another person's jobs all need an owner or admin acting
// with an `admin`-scoped token; an author acting on their own records needs only their usual token. Checked
// through MCP and the HTTP routes, with the rows read back from D1.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, fresh, newIdentity, type TestIdentity } from '../support/http';
import { idsOf, seedObservation, seedProject, seedSession, type Ids } from '../support/seed';
import { runJob } from '../support/jobs';
import { addTeammate } from '../teams/support';
import type { WireJob } from '../../../src/shared/jobs';
import { callTool, connect, textOf } from './mcp-client';

interface Team {
  /** The team's first user, an owner, with the bootstrap token (ingest, read, admin). */
  owner: TestIdentity;
  /** An admin of the team, with the token bootstrap gives an admin (ingest, read, admin). */
  admin: TestIdentity;
  /** The same admin's hook/MCP token: ingest and read only. */
  adminNarrow: string;
  mate: TestIdentity;
  mateIds: Ids;
  key: string;
  projectId: number;
}

async function team(): Promise<Team> {
  const owner = await newIdentity({ role: 'owner' });
  const admin = await newIdentity({ team: owner.team, role: 'admin' });
  const narrow = await addTeammate(owner, admin.user, { role: 'admin', scopes: ['ingest', 'read'] });
  expect(narrow.scopes).toEqual(['ingest', 'read']);
  const mate = await newIdentity({ team: owner.team, role: 'member' });
  const mateIds = await idsOf(mate);
  const key = `github.com/acme/${fresh('power')}`;
  const projectId = await seedProject(mateIds, key);
  return { owner, admin, adminNarrow: narrow.token, mate, mateIds, key, projectId };
}

const row = (id: number) =>
  env.DB.prepare('SELECT id, superseded_by FROM observations WHERE id = ?')
    .bind(id)
    .first<{ id: number; superseded_by: number | null }>();

describe('admin power needs the admin scope', { timeout: 60_000 }, () => {
  it("refuses an admin's narrow MCP token forgetting or superseding a teammate's record, and the admin-scoped token may", async () => {
    const t = await team();
    const session = await seedSession(t.mateIds, t.projectId, fresh('s'));
    const theirs = await seedObservation(t.mateIds, t.projectId, session, { title: 'The mate measured the cache' });
    const newer = await seedObservation(t.mateIds, t.projectId, session, { title: 'The mate measured it again' });

    const narrow = await connect(t.adminNarrow);
    const forget = await callTool(narrow, 'forget', { id: theirs });
    expect(forget.isError).toBe(true);
    expect(textOf(forget)).toMatch(/^not_allowed: .*admin-scoped token/);
    const supersede = await callTool(narrow, 'supersede', { id: theirs, by: newer, reason: 'measured again' });
    expect(supersede.isError).toBe(true);
    expect(textOf(supersede)).toMatch(/^not_allowed:/);
    // remember's supersedes are checked the same way, and a refused one stores nothing.
    const remembered = await callTool(narrow, 'remember', {
      project: t.key,
      text: `A note that corrects #${theirs}`,
      supersedes: [theirs],
    });
    expect(remembered.isError).toBe(true);
    await narrow.close();
    expect(await row(theirs)).toEqual({ id: theirs, superseded_by: null });

    // The same person with their admin-scoped token: allowed.
    const full = await connect(t.admin.token);
    expect(
      (await callTool(full, 'supersede', { id: theirs, by: newer, reason: 'measured again' })).isError,
    ).toBeFalsy();
    expect(await row(theirs)).toEqual({ id: theirs, superseded_by: newer });
    expect((await callTool(full, 'forget', { id: theirs })).isError).toBeFalsy();
    await full.close();
    expect(await row(theirs)).toBeNull();
  });

  it("refuses an admin's narrow token forgetting a teammate's session or a team project before its confirm step", async () => {
    const t = await team();
    const sessionKey = fresh('s');
    const session = await seedSession(t.mateIds, t.projectId, sessionKey);
    await seedObservation(t.mateIds, t.projectId, session, { title: 'Kept note' });

    const bySession = await call('/api/forget', {
      token: t.adminNarrow,
      json: { kind: 'session', session_id: sessionKey },
    });
    expect(bySession.status).toBe(403);
    expect(((await bySession.json()) as { error: { code: string } }).error.code).toBe('not_allowed');

    // Before: 409 confirm_required with the project's counts, i.e. the narrow token got as far as confirming.
    const project = await call('/api/forget', { token: t.adminNarrow, json: { kind: 'project', project: t.key } });
    expect(project.status).toBe(403);
    const body = (await project.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('not_admin');
    expect(body.error.message).not.toMatch(/deletes \d+ observations/);
    const left = await env.DB.prepare('SELECT COUNT(*) AS n FROM observations WHERE session_id = ?')
      .bind(session)
      .first<{ n: number }>();
    expect(left?.n).toBe(1);

    // The admin-scoped token reaches the confirm step.
    const full = await call('/api/forget', { token: t.admin.token, json: { kind: 'project', project: t.key } });
    expect(full.status).toBe(409);
  });

  it('lets an author forget and supersede their own records with their usual narrow token', async () => {
    const t = await team();
    const adminIds = await idsOf(t.admin);
    const session = await seedSession(adminIds, t.projectId, fresh('s'));
    const own = await seedObservation(adminIds, t.projectId, session, { title: 'My own note' });
    const newer = await seedObservation(adminIds, t.projectId, session, { title: 'My newer note' });
    const narrow = await connect(t.adminNarrow);
    expect((await callTool(narrow, 'supersede', { id: own, by: newer, reason: 'newer' })).isError).toBeFalsy();
    expect((await callTool(narrow, 'forget', { id: own })).isError).toBeFalsy();
    await narrow.close();
    expect(await row(own)).toBeNull();
  });

  it("shows an admin a teammate's job without what it names: a forgotten private project's key stays with its owner", async () => {
    const t = await team();
    const key = `github.com/mate/${fresh('secret-plans')}`;
    const projectId = await seedProject(t.mateIds, key, 'private');
    const session = await seedSession(t.mateIds, projectId, fresh('s'));
    await seedObservation(t.mateIds, projectId, session, { title: 'Private plans' });
    const res = await call('/api/forget', { token: t.mate.token, json: { kind: 'project', project: key, confirm: 1 } });
    expect(res.status).toBe(202);
    const { job } = (await res.json()) as { job: WireJob };
    const done = await runJob(t.mateIds.teamId, job.id);
    expect(done.status).toBe('done');

    // Its owner sees what the job did, by name.
    const own = await (await call(`/api/jobs/${job.id}`, { token: t.mate.token })).text();
    expect(own).toContain(key);
    // An admin (admin-scoped token) sees the job, not the key: in the list, by id, and at /api/jobs/:id.
    for (const path of ['/api/admin/jobs?kind=forget-project', `/api/admin/jobs/${job.id}`, `/api/jobs/${job.id}`]) {
      const res = await call(path, { token: t.admin.token });
      const text = await res.text();
      expect(res.status, path).toBe(200);
      expect(text, path).toContain(job.id);
      expect(text, path).not.toContain(key);
    }
    // The admin's narrow token reads no one else's job at all.
    expect((await call(`/api/jobs/${job.id}`, { token: t.adminNarrow })).status).toBe(404);
  });
});
