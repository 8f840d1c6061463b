// GET /api/context over HTTP against real D1: scoping, allow-lists, handles, options and refusals.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, fresh, newIdentity, type TestIdentity, forgetTokenMemo } from '../support/http';
import { idsOf, seedObservation, seedProject, seedSession, seedSummary, type Ids } from '../support/seed';
import { recallMode } from '../../../src/recall/mode';

const I: Record<string, string> = Object.fromEntries(recallMode('code').types.map((t) => [t.id, t.emoji]));

const DAY = 86_400_000;
const T0 = Date.parse('2026-05-04T09:00:00Z');

async function team(): Promise<{
  me: TestIdentity;
  mine: Ids;
  mate: TestIdentity;
  theirs: Ids;
  key: string;
  projectId: number;
}> {
  const me = await newIdentity();
  const mate = await newIdentity({ team: me.team });
  const mine = await idsOf(me);
  const theirs = await idsOf(mate);
  const key = `github.com/acme/${fresh('repo')}`;
  const projectId = await seedProject(mine, key);
  return { me, mine, mate, theirs, key, projectId };
}

const context = (token: string, query: string) => call(`/api/context?${query}`, { token });

describe('GET /api/context', () => {
  it('answers plain text wrapped in cairn-context, grouped by day, with teammates marked by handle and device', async () => {
    const t = await team();
    const s1 = await seedSession(t.mine, t.projectId, fresh('s'), T0);
    const s2 = await seedSession(t.theirs, t.projectId, fresh('s'), T0 + DAY);
    const a = await seedObservation(t.mine, t.projectId, s1, {
      type: 'bugfix',
      title: 'Cache key now includes locale',
      createdAt: T0,
      discoveryTokens: 900,
    });
    const b = await seedObservation(t.mine, t.projectId, s1, {
      type: 'discovery',
      title: 'Router reads locale from cookie',
      createdAt: T0 + 10_000,
    });
    const c = await seedObservation(t.theirs, t.projectId, s2, {
      type: 'decision',
      title: 'Locale negotiation stays server-side',
      createdAt: T0 + DAY,
    });
    const sum = await seedSummary(t.theirs, t.projectId, s2, {
      request: 'Fix wrong language on first load',
      learned: 'The cookie was read too late',
      createdAt: T0 + DAY + 60_000,
    });

    const res = await context(t.me.token, `project=${encodeURIComponent(t.key)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text.startsWith('<cairn-context>\n')).toBe(true);
    expect(text.endsWith('\n</cairn-context>')).toBe(true);
    expect(text).toContain(
      `## 2026-05-04\n${a} 9:00 ${I.bugfix} Cache key now includes locale\n${b} ″ ${I.discovery} Router reads locale from cookie\n## 2026-05-05`,
    );
    expect(text).toContain(
      `${c} 9:00 ${I.decision} Locale negotiation stays server-side @${t.mate.user}/${t.mate.device}`,
    );
    expect(text).toContain(
      `S${sum} 9:01 Fix wrong language on first load @${t.mate.user}/${t.mate.device}\n Learned: The cookie was read too late`,
    );
    expect(text).toContain('Stats: 3 obs · 1 session');
    expect(text).toContain('work ~900t');
  });

  it('welcomes a project with nothing stored, and answers an unknown project the same way', async () => {
    const t = await team();
    const empty = await (await context(t.me.token, `project=${encodeURIComponent(t.key)}`)).text();
    expect(empty).toContain('Nothing is stored for this project yet');
    const unknown = await (await context(t.me.token, 'project=github.com/nobody/nothing')).text();
    expect(unknown).toContain('Nothing is stored for this project yet');
  });

  it("honours the mode's type and concept allow-lists", async () => {
    const t = await team();
    const s = await seedSession(t.mine, t.projectId, fresh('s'), T0);
    await seedObservation(t.mine, t.projectId, s, {
      type: 'case-holding',
      title: 'Type from another mode',
      createdAt: T0,
    });
    await seedObservation(t.mine, t.projectId, s, {
      type: 'change',
      title: 'Only foreign concepts',
      concepts: ['red-flag', 'gotcha: with a description'],
      createdAt: T0 + 1,
    });
    await seedObservation(t.mine, t.projectId, s, {
      type: 'change',
      title: 'One known concept',
      concepts: ['red-flag', 'gotcha'],
      createdAt: T0 + 2,
    });
    await seedObservation(t.mine, t.projectId, s, {
      type: 'change',
      title: 'No concepts at all',
      concepts: [],
      createdAt: T0 + 3,
    });
    const text = await (await context(t.me.token, `project=${encodeURIComponent(t.key)}`)).text();
    expect(text).not.toContain('Type from another mode');
    expect(text).not.toContain('Only foreign concepts');
    expect(text).toContain('One known concept');
    expect(text).toContain('No concepts at all');
  });

  it("hides deleted rows, other teams' rows, and a teammate's private project", async () => {
    const t = await team();
    const s = await seedSession(t.mine, t.projectId, fresh('s'), T0);
    const gone = await seedObservation(t.mine, t.projectId, s, { title: 'Deleted later', createdAt: T0 });
    await seedObservation(t.mine, t.projectId, s, { title: 'Still here', createdAt: T0 + 1 });
    await env.DB.prepare('UPDATE observations SET deleted_at = ? WHERE id = ?').bind(T0, gone).run();

    const stranger = await newIdentity();
    const strangerIds = await idsOf(stranger);
    const theirProject = await seedProject(strangerIds, t.key); // same key, other team
    await seedObservation(strangerIds, theirProject, await seedSession(strangerIds, theirProject, fresh('s')), {
      title: 'Other team secret',
    });

    const privateKey = `local/${t.mate.user}/${fresh('scratch')}`;
    const privateId = await seedProject(t.theirs, privateKey, 'private');
    await seedObservation(t.theirs, privateId, await seedSession(t.theirs, privateId, fresh('s')), {
      title: 'Private scratch note',
    });

    const text = await (await context(t.me.token, `project=${encodeURIComponent(t.key)}`)).text();
    expect(text).toContain('Still here');
    expect(text).not.toContain('Deleted later');
    expect(text).not.toContain('Other team secret');
    const priv = await (await context(t.me.token, `project=${encodeURIComponent(privateKey)}`)).text();
    expect(priv).not.toContain('Private scratch note');
    expect(priv).toContain('Nothing is stored');
    const own = await (await context(t.mate.token, `project=${encodeURIComponent(privateKey)}`)).text();
    expect(own).toContain('Private scratch note');
  });

  it("shows a teammate's sensitive observation only when the team shares them", async () => {
    const t = await team();
    const s = await seedSession(t.theirs, t.projectId, fresh('s'), T0);
    await seedObservation(t.theirs, t.projectId, s, {
      type: 'sensitive',
      title: 'Staging DB password rotated',
      createdAt: T0,
    });
    await seedObservation(t.mine, t.projectId, s, {
      type: 'sensitive',
      title: 'My own sensitive note',
      createdAt: T0 + 1,
    });
    const before = await (await context(t.me.token, `project=${encodeURIComponent(t.key)}`)).text();
    expect(before).not.toContain('Staging DB password rotated');
    expect(before).toContain('My own sensitive note');
    const author = await (await context(t.mate.token, `project=${encodeURIComponent(t.key)}`)).text();
    expect(author).toContain('Staging DB password rotated');

    await env.DB.prepare(`UPDATE teams SET settings = '{"share_sensitive":true}' WHERE slug = ?`).bind(t.me.team).run();
    forgetTokenMemo();
    const after = await (await context(t.me.token, `project=${encodeURIComponent(t.key)}`)).text();
    expect(after).toContain('Staging DB password rotated');
  });

  it('merges several project keys (a repo and its worktree) into one index', async () => {
    const t = await team();
    const otherKey = `github.com/acme/${fresh('worktree')}`;
    const other = await seedProject(t.mine, otherKey);
    await seedObservation(t.mine, t.projectId, await seedSession(t.mine, t.projectId, fresh('s')), {
      title: 'From the repo',
      createdAt: T0,
    });
    await seedObservation(t.mine, other, await seedSession(t.mine, other, fresh('s')), {
      title: 'From the worktree',
      createdAt: T0 + 1,
    });
    const text = await (
      await context(t.me.token, `project=${encodeURIComponent(t.key)}&project=${encodeURIComponent(otherKey)}`)
    ).text();
    expect(text).toContain('From the repo');
    expect(text).toContain('From the worktree');
    expect(text).toContain(`${t.key} + ${otherKey}`);
  });

  it('limits rows by query options and by the team setting, newest kept', async () => {
    const t = await team();
    const s = await seedSession(t.mine, t.projectId, fresh('s'), T0);
    for (let i = 0; i < 6; i++)
      await seedObservation(t.mine, t.projectId, s, { title: `Row number ${i}`, createdAt: T0 + i * 60_000 });
    for (let i = 0; i < 3; i++)
      await seedSummary(t.mine, t.projectId, s, { request: `Request ${i}`, createdAt: T0 + i * 60_000 + 1 });
    const text = await (
      await context(t.me.token, `project=${encodeURIComponent(t.key)}&observations=2&sessions=1&full=1`)
    ).text();
    expect(text.match(/Row number/g)).toHaveLength(2);
    expect(text).toContain('**Row number 5**');
    expect(text).toContain('Row number 4');
    expect(text.match(/Request \d/g)).toEqual(['Request 2']);

    await env.DB.prepare(`UPDATE teams SET settings = '{"context_observations":3,"context_sessions":0}' WHERE slug = ?`)
      .bind(t.me.team)
      .run();
    forgetTokenMemo();
    const bySetting = await (await context(t.me.token, `project=${encodeURIComponent(t.key)}`)).text();
    expect(bySetting.match(/Row number/g)).toHaveLength(3);
    expect(bySetting).not.toContain('Request');
  });

  it('renders times in the time zone asked for', async () => {
    const t = await team();
    await seedObservation(t.mine, t.projectId, await seedSession(t.mine, t.projectId, fresh('s')), {
      title: 'Zoned',
      createdAt: Date.parse('2026-05-04T23:30:00Z'),
    });
    const text = await (await context(t.me.token, `project=${encodeURIComponent(t.key)}&tz=Asia/Tokyo`)).text();
    expect(text).toContain('## 2026-05-05');
    expect(text).toMatch(new RegExp(`\\d+ 8:30 ${I.discovery} Zoned`));
  });

  it.each([
    ['no project', '', 'invalid_query'],
    ['a bad number', 'project=x&observations=lots', 'invalid_query'],
    ['too many observations', 'project=x&observations=100000', 'invalid_query'],
    ['an unknown time zone', 'project=x&tz=Mars/Olympus', 'invalid_query'],
  ])('refuses %s with 400 and a stable code', async (_name, query, code) => {
    const t = await team();
    const res = await context(t.me.token, query);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
  });

  it('refuses a missing or wrong token', async () => {
    expect((await call('/api/context?project=x')).status).toBe(401);
    expect((await call('/api/context?project=x', { token: 'cairn_wrong' })).status).toBe(401);
  });

  it('refuses a token without the read scope', async () => {
    const t = await team();
    await env.DB.prepare(`UPDATE tokens SET scopes = 'ingest' WHERE team_id = ?`).bind(t.mine.teamId).run();
    forgetTokenMemo();
    const res = await context(t.me.token, `project=${encodeURIComponent(t.key)}`);
    expect(res.status).toBe(403);
  });
});
