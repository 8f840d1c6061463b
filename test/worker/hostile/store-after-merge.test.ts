// Issue 14, row 12: an event buffered (or cached) before a project merge is filed under the merged project
// when it is stored, instead of failing on the vanished project's id and dying as an unrevivable dead letter.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { storeTurn } from '../../../src/store/turn-store';
import { call, fresh } from '../support/http';
import { idsOf } from '../support/seed';
import { initEvent, send } from '../pipeline/support';
import { json, newOwner } from '../teams/support';

const projectIdOf = async (teamId: number, key: string) =>
  (
    await env.DB.prepare('SELECT id FROM projects WHERE team_id = ? AND key = ?')
      .bind(teamId, key)
      .first<{ id: number }>()
  )?.id ?? null;

describe('storing after a merge', () => {
  it('files a new session, its prompt and a turn snapshotted with the merged-away project under the project it went into', async () => {
    const owner = await newOwner();
    const ids = await idsOf(owner);
    const from = `github.com/${fresh('acme')}/old`;
    const into = `github.com/${fresh('acme')}/new`;
    const first = fresh('s');
    // Warms this isolate's 60 s project cache with `from`'s id, and gives a session to snapshot.
    expect((await send(owner.token, 'init', initEvent(first, 'before the merge', { project: from }))).status).toBe(202);
    await send(owner.token, 'init', initEvent(fresh('s'), 'target', { project: into }));
    const fromId = (await projectIdOf(ids.teamId, from))!;
    const intoId = (await projectIdOf(ids.teamId, into))!;
    const session = await env.DB.prepare('SELECT id FROM sessions WHERE team_id = ? AND session_key = ?')
      .bind(ids.teamId, first)
      .first<{ id: number }>();
    await json(await call('/api/admin/projects/merge', { token: owner.token, json: { from, into } }));
    expect(await projectIdOf(ids.teamId, from)).toBeNull();

    // A new session under the old key, while the cache still says `fromId`.
    const second = fresh('s');
    const res = await send(owner.token, 'init', initEvent(second, 'right after the merge', { project: from }));
    expect(res.status).toBe(202);
    const row = await env.DB.prepare(
      'SELECT s.project_id AS session_project, p.project_id AS prompt_project FROM sessions s JOIN prompts p ON p.session_id = s.id WHERE s.team_id = ? AND s.session_key = ?',
    )
      .bind(ids.teamId, second)
      .first<{ session_project: number; prompt_project: number }>();
    expect(row).toEqual({ session_project: intoId, prompt_project: intoId });

    // A turn whose events were snapshotted before the merge (the buffered case, and a dead letter retried later).
    const stored = await storeTurn(env.DB, {
      context: {
        teamId: ids.teamId,
        projectId: fromId,
        sessionDbId: session!.id,
        promptNumber: 1,
        promptId: null,
        authorUserId: ids.userId,
        deviceId: ids.deviceId,
        agentId: null,
        agentType: null,
      },
      observations: [
        {
          observation: {
            type: 'discovery',
            title: 'Filed after merge',
            subtitle: null,
            facts: [],
            narrative: 'n',
            concepts: [],
            filesRead: ['a.ts'],
            filesModified: [],
          },
          createdAt: Date.now(),
        },
      ],
      summary: null,
      discoveryTokens: 0,
      generationId: null,
      turnKey: fresh('turn'),
      storedAt: Date.now(),
    });
    expect(stored.observationIds).toHaveLength(1);
    const obs = await env.DB.prepare(
      'SELECT o.project_id, f.project_id AS file_project FROM observations o JOIN observation_files f ON f.observation_id = o.id WHERE o.id = ?',
    )
      .bind(stored.observationIds[0])
      .first<{ project_id: number; file_project: number }>();
    expect(obs).toEqual({ project_id: intoId, file_project: intoId });
  });
});
