// The viewer's data routes: feed paging and filters, sessions, authors, and who may see what.
import { describe, expect, it } from 'vitest';
import type { FeedItem, SessionView } from '#shared/wire/feed';
import { call, fresh, newIdentity } from '../support/http';
import { idsOf, seedObservation, seedProject, seedSession, seedSummary, seedWorld } from '../support/seed';

interface Page {
  items: FeedItem[];
  next: string | null;
}

async function feed(token: string, query: string): Promise<Page> {
  const res = await call(`/api/viewer/feed?${query}`, { token });
  expect(res.status).toBe(200);
  return (await res.json()) as Page;
}

const world = () => seedWorld();

describe('viewer feed', () => {
  it('lists observations and summaries of a project newest first', async () => {
    const w = await world();
    const t0 = Date.now() - 60_000;
    await seedObservation(w.ids, w.projectId, w.sessionId, { title: 'first', createdAt: t0 });
    await seedSummary(w.ids, w.projectId, w.sessionId, { request: 'wrap up', createdAt: t0 + 1000 });
    await seedObservation(w.ids, w.projectId, w.sessionId, { title: 'second', type: 'bugfix', createdAt: t0 + 2000 });
    const page = await feed(w.id.token, `project=${encodeURIComponent(w.key)}`);
    expect(page.items.map((i) => (i.kind === 'summary' ? `s:${i.request}` : `o:${i.title}`))).toEqual([
      'o:second',
      's:wrap up',
      'o:first',
    ]);
    expect(page.items[0]).toMatchObject({
      projectKey: w.key,
      type: 'bugfix',
      author: w.id.user,
      sessionId: w.sessionId,
    });
    expect(page.next).toBeNull();
  });

  it('pages through items with equal timestamps without losing or repeating any', async () => {
    const w = await world();
    const t = Date.now() - 10_000;
    for (let i = 0; i < 5; i++)
      await seedObservation(w.ids, w.projectId, w.sessionId, { title: `o${i}`, createdAt: t });
    for (let i = 0; i < 2; i++) await seedSummary(w.ids, w.projectId, w.sessionId, { request: `s${i}`, createdAt: t });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Page = await feed(
        w.id.token,
        `project=${encodeURIComponent(w.key)}&limit=3${cursor ? `&before=${cursor}` : ''}`,
      );
      seen.push(...page.items.map((i) => `${i.kind}:${i.id}`));
      cursor = page.next;
    } while (cursor);
    expect(seen).toHaveLength(7);
    expect(new Set(seen).size).toBe(7);
    expect(seen.slice(0, 2).every((s) => s.startsWith('summary:'))).toBe(true);
  });

  it('filters by type, by summaries only, and by author', async () => {
    const w = await world();
    const mate = await newIdentity({ team: w.id.team });
    const mateIds = await idsOf(mate);
    await seedObservation(w.ids, w.projectId, w.sessionId, { title: 'mine', type: 'feature' });
    await seedObservation(w.ids, w.projectId, w.sessionId, {
      title: 'theirs',
      type: 'decision',
      authorUserId: mateIds.userId,
    });
    await seedSummary(w.ids, w.projectId, w.sessionId, { request: 'the summary' });
    const p = `project=${encodeURIComponent(w.key)}`;
    expect((await feed(w.id.token, `${p}&type=decision`)).items.map((i) => i.id)).toHaveLength(1);
    expect((await feed(w.id.token, `${p}&type=decision`)).items[0]).toMatchObject({ title: 'theirs' });
    expect((await feed(w.id.token, `${p}&type=summary`)).items.map((i) => i.kind)).toEqual(['summary']);
    const byMate = await feed(w.id.token, `${p}&author=${encodeURIComponent(mate.user)}`);
    expect(byMate.items.map((i) => (i.kind === 'observation' ? i.title : i.request))).toEqual(['theirs']);
  });

  it('hides private projects of teammates, their sensitive observations, deleted rows and other teams', async () => {
    const w = await world();
    const mate = await newIdentity({ team: w.id.team });
    const privateKey = `local/${w.id.user}/${fresh('notes')}`;
    const privateId = await seedProject(w.ids, privateKey, 'private');
    const privSession = await seedSession(w.ids, privateId, fresh('sess'));
    await seedObservation(w.ids, privateId, privSession, { title: 'my private note' });
    await seedObservation(w.ids, w.projectId, w.sessionId, { title: 'my secret', type: 'sensitive' });
    const gone = await seedObservation(w.ids, w.projectId, w.sessionId, { title: 'deleted one' });
    const { env } = await import('cloudflare:workers');
    await env.DB.prepare('UPDATE observations SET deleted_at = ? WHERE id = ?').bind(Date.now(), gone).run();
    await seedObservation(w.ids, w.projectId, w.sessionId, { title: 'shared work' });

    const mine = await feed(w.id.token, '');
    expect(mine.items.map((i) => (i.kind === 'observation' ? i.title : ''))).toEqual([
      'shared work',
      'my secret',
      'my private note',
    ]);
    const theirs = await feed(mate.token, '');
    expect(theirs.items.map((i) => (i.kind === 'observation' ? i.title : ''))).toEqual(['shared work']);

    const stranger = await newIdentity();
    expect((await feed(stranger.token, '')).items).toEqual([]);
    const asked = await call(`/api/viewer/feed?project=${encodeURIComponent(w.key)}`, { token: stranger.token });
    const missing = await call(`/api/viewer/feed?project=${encodeURIComponent('github.com/nobody/' + fresh('x'))}`, {
      token: stranger.token,
    });
    expect(asked.status).toBe(404);
    expect(await asked.json()).toEqual(await missing.json());
    const matePrivate = await call(`/api/viewer/feed?project=${encodeURIComponent(privateKey)}`, { token: mate.token });
    expect(matePrivate.status).toBe(404);
  });

  it('refuses bad query values with stable error codes', async () => {
    const w = await world();
    for (const q of ['before=yesterday', 'type=Not%20A%20Type', 'limit=0', 'limit=5000']) {
      const res = await call(`/api/viewer/feed?${q}`, { token: w.id.token });
      expect(res.status, q).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_query');
    }
    const noToken = await call('/api/viewer/feed');
    expect(noToken.status).toBe(401);
  });
});

describe('viewer sessions and identity', () => {
  it('shows a session with its summary and observations in order', async () => {
    const w = await world();
    const t = Date.now() - 5000;
    await seedObservation(w.ids, w.projectId, w.sessionId, { title: 'step one', createdAt: t });
    await seedObservation(w.ids, w.projectId, w.sessionId, { title: 'step two', createdAt: t + 1 });
    await seedSummary(w.ids, w.projectId, w.sessionId, { request: 'do it', completed: 'done', createdAt: t + 2 });
    const res = await call(`/api/viewer/sessions/${w.sessionId}`, { token: w.id.token });
    expect(res.status).toBe(200);
    const view = (await res.json()) as SessionView;
    expect(view.session).toMatchObject({ id: w.sessionId, projectKey: w.key, author: w.id.user });
    expect(view.observations.map((o) => o.title)).toEqual(['step one', 'step two']);
    expect(view.summaries.map((s) => s.completed)).toEqual(['done']);
  });

  it('answers a session of another team exactly like a missing one', async () => {
    const w = await world();
    const stranger = await newIdentity();
    const theirs = await call(`/api/viewer/sessions/${w.sessionId}`, { token: stranger.token });
    const none = await call('/api/viewer/sessions/999999999', { token: stranger.token });
    expect(theirs.status).toBe(404);
    expect(await theirs.json()).toEqual(await none.json());
    expect((await call('/api/viewer/sessions/abc', { token: w.id.token })).status).toBe(400);
  });

  it('tells the signed-in user who they are and lists the team members', async () => {
    const w = await world();
    const mate = await newIdentity({ team: w.id.team });
    const me = (await (await call('/api/viewer/me', { token: w.id.token })).json()) as { team: string; handle: string };
    expect(me).toMatchObject({ team: w.id.team, handle: w.id.user });
    const authors = (await (await call('/api/viewer/authors', { token: w.id.token })).json()) as { authors: string[] };
    expect(authors.authors.sort()).toEqual([w.id.user, mate.user].sort());
  });
});
