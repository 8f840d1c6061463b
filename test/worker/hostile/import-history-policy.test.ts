// Issue 27, the history lines of an import (link, event, signal) keep the one write policy: an admin's import
// writes history only onto the caller's own imported rows. Lines naming a teammate's live rows, in a team
// project or their private one, by the session key and content hash read from storage, change nothing there:
// no link, no event row, no signal, the record still in the teammate's context; and the answer is the one a
// file naming nothing gets (no existence oracle). An imported row never carries a release it claims.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, fresh, newIdentity } from '../support/http';
import { importNow } from '../support/import';
import { idsOf, seedObservation, seedProject, seedSession, seedWorld } from '../support/seed';

const T0 = Date.parse('2026-05-04T09:00:00Z');

const historyLines = (key: string, hash: string, handle: string) => [
  {
    kind: 'link',
    link: 'superseded_by',
    session_key: key,
    content_hash: hash,
    to_session_key: key,
    to_content_hash: hash,
  },
  {
    kind: 'link',
    link: 'merged_into',
    session_key: key,
    content_hash: hash,
    to_session_key: key,
    to_content_hash: 'x',
  },
  {
    kind: 'event',
    session_key: key,
    content_hash: hash,
    action: 'wrong',
    by_session_key: null,
    by_content_hash: null,
    actor_user: handle,
    actor: 'user',
    reason: 'planted',
    created_at: T0,
    count: 3,
  },
  {
    kind: 'signal',
    session_key: key,
    content_hash: hash,
    fetched: 9,
    useful: 0,
    wrong: 3,
    outdated: 0,
    review: 'pending',
    updated_at: T0,
  },
];

describe("an import's history lines", { timeout: 60_000 }, () => {
  it("write nothing onto a teammate's rows, in a team project or their private one, and claim no release", async () => {
    const w = await seedWorld();
    const mate = await newIdentity({ team: w.id.team, role: 'member' });
    const mateIds = await idsOf(mate);
    const word = fresh('mine');
    const shared = await seedSession(mateIds, w.projectId, fresh('s'));
    const x = await seedObservation(mateIds, w.projectId, shared, { title: `Team ${word} note`, createdAt: T0 });
    const privKey = `github.com/mate/${fresh('priv')}`;
    const priv = await seedProject(mateIds, privKey, 'private');
    const y = await seedObservation(mateIds, priv, await seedSession(mateIds, priv, fresh('s')), {
      title: `Private ${word} note`,
      createdAt: T0,
    });
    const named = async (id: number) =>
      (await env.DB.prepare(
        'SELECT s.session_key AS key, o.content_hash AS hash FROM observations o JOIN sessions s ON s.id = o.session_id WHERE o.id = ?',
      )
        .bind(id)
        .first<{ key: string; hash: string }>())!;
    const [nx, ny] = [await named(x), await named(y)];

    const file = [...historyLines(nx.key, nx.hash, mate.user), ...historyLines(ny.key, ny.hash, mate.user)];
    const free = [
      ...historyLines(fresh('nobody'), 'h-free', mate.user),
      ...historyLines(fresh('nobody'), 'h-free', mate.user),
    ];
    const res = await importNow(w.id.token, file.map((r) => JSON.stringify(r)).join('\n'));
    const nothing = await importNow(w.id.token, free.map((r) => JSON.stringify(r)).join('\n'));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(await nothing.json());

    for (const id of [x, y]) {
      const row = await env.DB.prepare('SELECT superseded_by, merged_into FROM observations WHERE id = ?')
        .bind(id)
        .first();
      expect(row).toEqual({ superseded_by: null, merged_into: null });
      for (const table of ['observation_events', 'observation_signals']) {
        const n = await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE observation_id = ?`)
          .bind(id)
          .first<{ n: number }>();
        expect(n, table).toEqual({ n: 0 });
      }
    }
    const context = await (
      await call(`/api/context?project=${encodeURIComponent(w.key)}&tz=UTC`, { token: mate.token })
    ).text();
    expect(context).toContain(`Team ${word} note`);

    // The admin's own row in the same file: its history applies, a release it claims does not.
    const own = fresh('own');
    const lines = [
      { kind: 'project', key: w.key, visibility: 'team', owner: null, created_at: T0 },
      {
        kind: 'session',
        session_key: own,
        project: w.key,
        user: w.id.user,
        platform: 'claude-code',
        prompt_count: 1,
        started_at: T0,
        ended_at: null,
      },
      {
        kind: 'observation',
        session_key: own,
        prompt_number: 1,
        prompt_id: null,
        author: w.id.user,
        created_at: T0,
        released_at: T0 + 1,
        released_by: mate.user,
        type: 'discovery',
        title: `Own ${word} note`,
        subtitle: null,
        facts: [],
        narrative: null,
        concepts: [],
        files_read: [],
        files_modified: [],
        discovery_tokens: 0,
        content_hash: 'h-own',
        agent_id: null,
        agent_type: null,
        source: 'observer',
      },
      ...historyLines(own, 'h-own', w.id.user).slice(2),
    ];
    expect((await importNow(w.id.token, lines.map((r) => JSON.stringify(r)).join('\n'))).status).toBe(200);
    const mine = await env.DB.prepare(
      "SELECT o.released_at, o.released_by, s.review, (SELECT COUNT(*) FROM observation_events e WHERE e.observation_id = o.id AND e.actor_user_id = ?) AS events FROM observations o LEFT JOIN observation_signals s ON s.observation_id = o.id WHERE o.team_id = ? AND o.content_hash = 'h-own'",
    )
      .bind(w.ids.userId, w.ids.teamId)
      .first();
    expect(mine).toEqual({ released_at: null, released_by: null, review: 'pending', events: 3 });
  });
});
