// Timeline (anchor forms, depth, scoping), full records by id, prompt context and the project list.
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAnchor } from '../../../src/recall/render-timeline';
import { call, fresh, newIdentity, type TestIdentity } from '../support/http';
import { idsOf, seedObservation, seedProject, seedSession, seedSummary, type Ids } from '../support/seed';
import { recallMode } from '../../../src/recall/mode';

const I: Record<string, string> = Object.fromEntries(recallMode('code').types.map((t) => [t.id, t.emoji]));

const T0 = Date.parse('2026-06-01T08:00:00Z');
const MIN = 60_000;

interface World {
  me: TestIdentity;
  ids: Ids;
  key: string;
  project: number;
  seeded: number[];
  summaryId: number;
  stranger: TestIdentity;
}
let w: World;

beforeAll(async () => {
  const me = await newIdentity();
  const ids = await idsOf(me);
  const key = `github.com/acme/${fresh('repo')}`;
  const project = await seedProject(ids, key);
  const session = await seedSession(ids, project, fresh('s'), T0);
  const seeded: number[] = [];
  for (let i = 0; i < 50; i++) {
    seeded.push(
      await seedObservation(ids, project, session, {
        title: `Step ${i} of the migration`,
        narrative: `Narrative for step ${i}`,
        facts: [`fact ${i}`],
        createdAt: T0 + i * MIN,
      }),
    );
  }
  const summaryId = await seedSummary(ids, project, session, {
    request: 'Move sessions to the new table',
    createdAt: T0 + 25 * MIN + 30_000,
  });
  w = { me, ids, key, project, seeded, summaryId, stranger: await newIdentity() };
});

type TimelineJson = {
  anchor: { kind: string; id: number | string | null };
  items: { kind: string; id: number | string; anchor: boolean }[];
};
const timeline = async (token: string, q: string) => call(`/api/timeline?${q}`, { token });

describe('parseAnchor', () => {
  it.each([
    ['25', { kind: 'observation', id: 25 }],
    [' #25 ', { kind: 'observation', id: 25 }],
    ['S12', { kind: 'summary', id: 12 }],
    ['#s12', { kind: 'summary', id: 12 }],
    ['2026-06-01T08:10:00Z', { kind: 'time', at: Date.parse('2026-06-01T08:10:00Z') }],
    ['2026-06-01', { kind: 'time', at: Date.parse('2026-06-01') }],
  ])('reads %j', (raw, expected) => expect(parseAnchor(raw)).toEqual(expected));

  it.each(['123abc', '0', 'S', '', 'yesterday', '2026-13-45T99:99'])('rejects %j', (raw) =>
    expect(parseAnchor(raw)).toBeNull(),
  );
});

describe('GET /api/timeline', () => {
  it('returns exactly the anchor and its neighbours for an id given as number or #id', async () => {
    for (const anchor of [String(w.seeded[10]), `%23${w.seeded[10]}`]) {
      const res = await timeline(w.me.token, `anchor=${anchor}&before=3&after=3`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as TimelineJson;
      expect(body.items.map((i) => i.id)).toEqual(w.seeded.slice(7, 14));
      expect(body.items.filter((i) => i.anchor).map((i) => i.id)).toEqual([w.seeded[10]]);
    }
  });

  it('places the session summary between the observations around its time', async () => {
    const body = (await (await timeline(w.me.token, `anchor=${w.seeded[25]}&before=1&after=2`)).json()) as TimelineJson;
    expect(body.items.map((i) => i.id)).toEqual([w.seeded[24], w.seeded[25], `S${w.summaryId}`, w.seeded[26]]);
  });

  it('accepts a summary anchor S<id> and an ISO time anchor', async () => {
    const bySummary = (await (
      await timeline(w.me.token, `anchor=S${w.summaryId}&before=1&after=1`)
    ).json()) as TimelineJson;
    expect(bySummary.items.map((i) => i.id)).toEqual([w.seeded[25], `S${w.summaryId}`, w.seeded[26]]);
    const iso = new Date(T0 + 30 * MIN).toISOString();
    const byTime = (await (await timeline(w.me.token, `anchor=${iso}&before=2&after=2`)).json()) as TimelineJson;
    expect(byTime.anchor.kind).toBe('time');
    expect(byTime.items.map((i) => i.id)).toEqual([w.seeded[29], w.seeded[30], w.seeded[31], w.seeded[32]]);
  });

  it('picks the anchor with a search query', async () => {
    const body = (await (
      await timeline(w.me.token, `q=${encodeURIComponent('"Step 42"')}&before=0&after=0`)
    ).json()) as TimelineJson;
    expect(body.items.map((i) => i.id)).toEqual([w.seeded[42]]);
  });

  it('renders text with the anchor marked when format=text', async () => {
    const res = await timeline(w.me.token, `anchor=${w.seeded[3]}&before=1&after=1&format=text`);
    const text = await res.text();
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(text).toContain(`Timeline around #${w.seeded[3]}: 3 entries`);
    expect(text).toContain(`${w.seeded[3]} 8:03 ${I.discovery} Step 3 of the migration (~`);
    expect(text).toMatch(new RegExp(`${w.seeded[3]} .*<= anchor`));
  });

  it.each([
    ['a malformed anchor', 'anchor=123abc', 400, 'invalid_anchor'],
    ['neither anchor nor query', '', 400, 'anchor_required'],
    ['a depth out of range', 'anchor=1&before=500', 400, 'invalid_query'],
    ['an id that does not exist', 'anchor=99999999', 404, 'anchor_not_found'],
  ])('answers %s with a stable error', async (_n, q, status, code) => {
    const res = await timeline(w.me.token, q);
    expect(res.status).toBe(status);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
  });

  it("answers another team's anchor exactly like a missing one", async () => {
    const foreign = await timeline(w.stranger.token, `anchor=${w.seeded[5]}`);
    const missing = await timeline(w.stranger.token, 'anchor=99999999');
    expect(foreign.status).toBe(404);
    expect(await foreign.json()).toEqual(await missing.json());
  });
});

describe('GET /api/observations', () => {
  it('returns full records in the order asked, leaving out ids the caller may not read', async () => {
    const res = await call(`/api/observations?ids=${w.seeded[2]},${w.seeded[1]},99999999`, { token: w.me.token });
    expect(res.status).toBe(200);
    const { observations } = (await res.json()) as {
      observations: {
        id: number;
        title: string;
        narrative: string;
        facts: string[];
        project: string;
        author: string;
        createdAt: string;
      }[];
    };
    expect(observations.map((o) => o.id)).toEqual([w.seeded[2], w.seeded[1]]);
    expect(observations[0]).toMatchObject({
      title: 'Step 2 of the migration',
      narrative: 'Narrative for step 2',
      facts: ['fact 2'],
      project: w.key,
      author: w.me.user,
      createdAt: new Date(T0 + 2 * MIN).toISOString(),
    });
    const foreign = (await (
      await call(`/api/observations?ids=${w.seeded[2]}`, { token: w.stranger.token })
    ).json()) as { observations: unknown[] };
    expect(foreign.observations).toEqual([]);
  });

  it.each([
    ['', 'missing'],
    ['1,abc', 'not a number'],
    ['-4', 'negative'],
    [Array.from({ length: 101 }, (_, i) => i + 1).join(','), 'too many'],
  ])('refuses ids=%s (%s) with 400 invalid_ids', async (ids) => {
    const res = await call(`/api/observations?ids=${ids}`, { token: w.me.token });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_ids');
  });
});

describe('GET /api/context/prompt', () => {
  it('returns the best matches with their narrative, and nothing for a trivial prompt', async () => {
    const res = await call(
      `/api/context/prompt?project=${encodeURIComponent(w.key)}&q=${encodeURIComponent('what happened in step 17 of the migration?')}`,
      { token: w.me.token },
    );
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.startsWith('<cairn-context>')).toBe(true);
    expect(text).toContain('Narrative for step 17');
    expect(text.split('\n').filter((l) => l.startsWith('- '))).toHaveLength(5);
    const trivial = await call(`/api/context/prompt?project=${encodeURIComponent(w.key)}&q=ok`, { token: w.me.token });
    expect(await trivial.text()).toBe('');
  });
});

describe('GET /api/projects', () => {
  it('lists visible projects with counts of readable observations, not other teams or private ones', async () => {
    const mate = await newIdentity({ team: w.me.team });
    const mateIds = await idsOf(mate);
    const privateKey = `local/${mate.user}/${fresh('p')}`;
    const priv = await seedProject(mateIds, privateKey, 'private');
    await seedObservation(mateIds, priv, await seedSession(mateIds, priv, fresh('s')), { title: 'hidden' });
    const deleted = await seedObservation(w.ids, w.project, await seedSession(w.ids, w.project, fresh('s')), {
      title: 'gone',
      createdAt: T0 - MIN,
    });
    await env.DB.prepare('UPDATE observations SET deleted_at = 1 WHERE id = ?').bind(deleted).run();

    const { projects } = (await (await call('/api/projects', { token: w.me.token })).json()) as {
      projects: { key: string; observations: number; last_activity: string | null; visibility: string }[];
    };
    expect(projects).toContainEqual({
      key: w.key,
      visibility: 'team',
      observations: 50,
      last_activity: new Date(T0 + 49 * MIN).toISOString(),
    });
    expect(projects.some((p) => p.key === privateKey)).toBe(false);
    const mine = (await (await call('/api/projects', { token: mate.token })).json()) as { projects: { key: string }[] };
    expect(mine.projects.map((p) => p.key)).toContain(privateKey);
    const stranger = (await (await call('/api/projects', { token: w.stranger.token })).json()) as {
      projects: unknown[];
    };
    expect(stranger.projects).toEqual([]);
  });
});
