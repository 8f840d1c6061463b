// Project administration: rename keeps memory, merge moves every row in one batch, visibility switches.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, fresh } from '../support/http';
import { idsOf, seedObservation, seedProject, seedSession, seedSummary } from '../support/seed';
import { addTeammate, errorCode, json, newOwner } from './support';

interface SearchBody {
  results: { id: number; project: string }[];
  total: number;
}
interface ProjectList {
  projects: { key: string; visibility: string; owner: string | null; observations: number; aliases: string[] }[];
}

const search = async (token: string, q: string, project?: string) =>
  json<SearchBody>(
    await call(`/api/search?q=${encodeURIComponent(q)}${project ? `&project=${encodeURIComponent(project)}` : ''}`, {
      token,
    }),
  );

async function seeded(title: string) {
  const owner = await newOwner();
  const ids = await idsOf(owner);
  const key = `github.com/${fresh('acme')}/widgets`;
  const projectId = await seedProject(ids, key);
  const sessionId = await seedSession(ids, projectId, fresh('s'));
  const obsId = await seedObservation(ids, projectId, sessionId, {
    title,
    narrative: `${title} narrative`,
    filesModified: ['src/a.ts'],
  });
  await seedSummary(ids, projectId, sessionId, { request: `${title} request` });
  await env.DB.prepare(
    "INSERT INTO prompts (team_id, project_id, session_id, prompt_number, text, author_user_id, created_at) VALUES (?, ?, ?, 1, 'hello', ?, ?)",
  )
    .bind(ids.teamId, projectId, sessionId, ids.userId, Date.now())
    .run();
  return { owner, ids, key, projectId, sessionId, obsId };
}

describe('project rename', () => {
  it('keeps memory reachable under the new key and still answers to the old one', async () => {
    const s = await seeded('zephyr cache invalidation');
    const to = `github.com/${fresh('acme')}/gadgets`;
    const res = await json<{ project: { key: string; previous: string } }>(
      await call('/api/admin/projects/rename', { token: s.owner.token, json: { from: s.key, to } }),
    );
    expect(res.project).toEqual({ key: to, previous: s.key });
    const byNew = await search(s.owner.token, 'zephyr', to);
    expect(byNew.results.map((r) => r.id)).toEqual([s.obsId]);
    expect(byNew.results[0]!.project).toBe(to);
    const byOld = await search(s.owner.token, 'zephyr', s.key);
    expect(byOld.results.map((r) => r.id)).toEqual([s.obsId]);
    const ctx = await call(`/api/context?project=${encodeURIComponent(to)}`, { token: s.owner.token });
    expect(await ctx.text()).toContain('zephyr cache invalidation');
    const list = await json<ProjectList>(await call('/api/admin/projects', { token: s.owner.token }));
    expect(list.projects.find((p) => p.key === to)).toMatchObject({ aliases: [s.key], observations: 1 });
    expect((await call('/api/admin/audit?action=project.rename', { token: s.owner.token })).status).toBe(200);
  });

  it('refuses a key that already names another project', async () => {
    const s = await seeded('x');
    const other = `github.com/${fresh('acme')}/other`;
    await seedProject(s.ids, other);
    const res = await call('/api/admin/projects/rename', { token: s.owner.token, json: { from: s.key, to: other } });
    expect(res.status).toBe(409);
    expect(await errorCode(res)).toBe('project_key_unavailable');
  });

  it('can rename back to an old key', async () => {
    const s = await seeded('y');
    const to = `github.com/${fresh('acme')}/renamed`;
    await call('/api/admin/projects/rename', { token: s.owner.token, json: { from: s.key, to } });
    const back = await call('/api/admin/projects/rename', { token: s.owner.token, json: { from: to, to: s.key } });
    expect(back.status).toBe(200);
    const list = await json<ProjectList>(await call('/api/admin/projects', { token: s.owner.token }));
    expect(list.projects.find((p) => p.key === s.key)?.aliases).toEqual([to]);
  });

  it('answers an unknown project like any missing thing', async () => {
    const owner = await newOwner();
    const res = await call('/api/admin/projects/rename', {
      token: owner.token,
      json: { from: 'github.com/none/none', to: 'github.com/a/b' },
    });
    expect(res.status).toBe(404);
    expect(await errorCode(res)).toBe('not_found');
  });
});

describe('project merge', () => {
  it('moves observations, summaries, sessions, prompts and file rows, and leaves an alias', async () => {
    const s = await seeded('merge me quasar');
    const into = `github.com/${fresh('acme')}/main`;
    const intoId = await seedProject(s.ids, into);
    const res = await json<{ moved: Record<string, number> }>(
      await call('/api/admin/projects/merge', { token: s.owner.token, json: { from: s.key, into } }),
    );
    expect(res.moved).toEqual({ observations: 1, summaries: 1, sessions: 1, prompts: 1 });
    for (const table of ['observations', 'summaries', 'sessions', 'prompts', 'observation_files']) {
      const left = await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE project_id = ?`)
        .bind(s.projectId)
        .first<{ n: number }>();
      const moved = await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE project_id = ?`)
        .bind(intoId)
        .first<{ n: number }>();
      expect(left?.n, table).toBe(0);
      expect(moved?.n, table).toBe(1);
    }
    expect(await env.DB.prepare('SELECT id FROM projects WHERE id = ?').bind(s.projectId).first()).toBeNull();
    expect((await search(s.owner.token, 'quasar', s.key)).results.map((r) => r.id)).toEqual([s.obsId]);
    expect((await search(s.owner.token, 'quasar', into)).results[0]?.project).toBe(into);
  });

  it('refuses to merge a project into itself', async () => {
    const s = await seeded('z');
    const res = await call('/api/admin/projects/merge', { token: s.owner.token, json: { from: s.key, into: s.key } });
    expect(res.status).toBe(400);
    expect(await errorCode(res)).toBe('same_project');
  });
});

describe('project visibility', () => {
  it('hides a private project from a teammate until it is made team-visible', async () => {
    const s = await seeded('private nebula secret');
    const bob = await addTeammate(s.owner, fresh('bob'));
    expect((await search(bob.token, 'nebula')).total).toBe(1);
    await json(
      await call('/api/admin/projects/visibility', {
        token: s.owner.token,
        json: { key: s.key, visibility: 'private' },
      }),
    );
    expect((await search(bob.token, 'nebula')).total).toBe(0);
    expect((await search(s.owner.token, 'nebula')).total).toBe(1);
    const bobProjects = await json<{ projects: { key: string }[] }>(await call('/api/projects', { token: bob.token }));
    expect(bobProjects.projects.map((p) => p.key)).not.toContain(s.key);

    await json(
      await call('/api/admin/projects/visibility', { token: s.owner.token, json: { key: s.key, visibility: 'team' } }),
    );
    expect((await search(bob.token, 'nebula')).total).toBe(1);
  });

  it("does not let another admin see, rename or reopen someone else's private project", async () => {
    const s = await seeded('mine only');
    await call('/api/admin/projects/visibility', { token: s.owner.token, json: { key: s.key, visibility: 'private' } });
    const admin = await addTeammate(s.owner, fresh('adm'), { role: 'admin', scopes: ['ingest', 'read', 'admin'] });
    const list = await json<ProjectList>(await call('/api/admin/projects', { token: admin.token }));
    expect(list.projects.map((p) => p.key)).not.toContain(s.key);
    for (const [path, body] of [
      ['/api/admin/projects/visibility', { key: s.key, visibility: 'team' }],
      ['/api/admin/projects/rename', { from: s.key, to: 'github.com/x/y' }],
      ['/api/admin/projects/merge', { from: s.key, into: s.key }],
    ] as const) {
      const res = await call(path, { token: admin.token, json: body });
      expect(res.status, path).toBe(404);
      expect(await errorCode(res)).toBe('not_found');
    }
    const row = await env.DB.prepare('SELECT visibility, key FROM projects WHERE id = ?').bind(s.projectId).first();
    expect(row).toEqual({ visibility: 'private', key: s.key });
  });
});
