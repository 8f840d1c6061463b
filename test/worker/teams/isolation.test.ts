// Isolation: team B's token walks every route and MCP tool against team A's data (ids, project keys,
// queries, timeline anchors, file paths, forget). Nothing may be returned, counted or changed, and each
// answer must equal the answer about something that does not exist. The same walk checks that a private
// project is invisible to a teammate until it is made team-visible.
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { visibilityRuleUses } from '../../../src/db/visibility';
import { storePrompt } from '../../../src/store/sessions';
import { call, fresh, type TestIdentity } from '../support/http';
import { idsOf, seedObservation, seedProject, seedSession, seedSummary, type Ids } from '../support/seed';
import { expectRoute, mcp, mcpTools, normalised, teamSnapshot } from './isolation-support';
import { addTeammate, newOwner } from './support';

/** Everything a probe can point at. `real` targets exist in team A; `ghost` targets exist nowhere. */
interface Target {
  key: string;
  secret: string;
  handle: string;
  file: string;
  obsId: number;
  summaryId: number;
  sessionKey: string;
  sessionId: number;
  eventId: string;
  at: number;
}

/** A random made-up word: no shared prefix, so neither FTS nor the local embedder relates two of them. */
const word = () => Array.from({ length: 11 }, () => 'bcdfghjklmnpqrstvwxz'[Math.floor(Math.random() * 20)]).join('');

async function seedTarget(owner: TestIdentity, ids: Ids, visibility: 'team' | 'private'): Promise<Target> {
  const secret = word();
  const key = `github.com/${fresh('acme')}/vault`;
  const projectId = await seedProject(ids, key, visibility);
  const sessionKey = fresh('sess');
  const sessionId = await seedSession(ids, projectId, sessionKey);
  const file = `src/${secret}/ledger.ts`;
  const at = Date.now() - 60_000;
  let obsId = 0;
  for (let i = 0; i < 3; i++) {
    obsId = await seedObservation(ids, projectId, sessionId, {
      title: `${secret} ledger reconciliation ${i}`,
      narrative: `The ${secret} ledger reconciles payments nightly.`,
      facts: [`${secret} fact`],
      filesModified: [file],
      createdAt: at + i,
    });
  }
  await seedObservation(ids, projectId, sessionId, {
    type: 'sensitive',
    title: `${secret} sensitive credential`,
    createdAt: at + 5,
  });
  const summaryId = await seedSummary(ids, projectId, sessionId, {
    request: `${secret} summary request`,
    learned: `${secret} learned`,
  });
  await storePrompt(env.DB, {
    teamId: ids.teamId,
    projectId,
    sessionDbId: sessionId,
    promptNumber: 1,
    text: `${secret} prompt text`,
    authorUserId: ids.userId,
    createdAt: at,
  });
  return { key, secret, handle: owner.user, file, obsId, summaryId, sessionKey, sessionId, eventId: fresh('evt'), at };
}

const ghost = (): Target => ({
  key: `github.com/${fresh('nobody')}/nothing`,
  secret: word(),
  handle: fresh('nobody'),
  file: `src/${word()}/none.ts`,
  obsId: 987_654_321,
  summaryId: 987_654_322,
  sessionKey: fresh('nosess'),
  sessionId: 987_654_323,
  eventId: fresh('noevt'),
  at: Date.now() - 60_000,
});

// `S<id>` as a whole string: there is no word boundary between the S and the digits for the numeric pass.
const valuesOf = (t: Target) => [
  t.key,
  t.secret,
  t.handle,
  t.file,
  t.sessionKey,
  t.eventId,
  `S${t.summaryId}`,
  t.obsId,
  t.summaryId,
  t.sessionId,
];
const enc = encodeURIComponent;

interface Probe {
  name: string;
  /** Read-only: the owner's token on the real target must see something (proves the probe can fail). */
  read: boolean;
  run: (token: string, t: Target) => Promise<Response>;
}

const get = (name: string, path: (t: Target) => string): Probe => ({
  name,
  read: true,
  run: (token, t) => call(path(t), { token }),
});
const post = (name: string, path: string, body: (t: Target) => unknown, method = 'POST'): Probe => ({
  name,
  read: false,
  run: (token, t) => call(path, { token, method, json: body(t) }),
});
const event = (t: Target, suffix: string, extra: Record<string, unknown>) => ({
  event_id: `${t.eventId}-${suffix}`,
  session_id: t.sessionKey,
  project: t.key,
  cwd: '/work/vault',
  occurred_at: t.at,
  ...extra,
});

const READ_PROBES: Probe[] = [
  get('context', (t) => `/api/context?project=${enc(t.key)}`),
  get('file context', (t) => `/api/context/file?project=${enc(t.key)}&path=${enc(t.file)}&mtime=0`),
  get('prompt context', (t) => `/api/context/prompt?project=${enc(t.key)}&q=${enc(`${t.secret} ledger`)}`),
  get('search by query', (t) => `/api/search?q=${t.secret}`),
  get('search by query and project', (t) => `/api/search?q=${t.secret}&project=${enc(t.key)}`),
  get('search by project', (t) => `/api/search?project=${enc(t.key)}`),
  get('search by file', (t) => `/api/search?file=${enc(t.file)}`),
  get('search by author', (t) => `/api/search?author=${enc(t.handle)}&q=${t.secret}`),
  get('search as text', (t) => `/api/search?q=${t.secret}&format=text`),
  get('search all kinds', (t) => `/api/search?q=${t.secret}&kind=all`),
  get('search all kinds by project', (t) => `/api/search?project=${enc(t.key)}&kind=all`),
  get('search summaries', (t) => `/api/search?q=${t.secret}&kind=summaries`),
  get('search prompts as text', (t) => `/api/search?q=${t.secret}&kind=prompts&format=text`),
  get('timeline by id', (t) => `/api/timeline?anchor=${t.obsId}`),
  get('timeline by summary', (t) => `/api/timeline?anchor=S${t.summaryId}`),
  get(
    'timeline by time and project',
    (t) => `/api/timeline?anchor=${new Date(t.at).toISOString()}&project=${enc(t.key)}`,
  ),
  get('timeline by query', (t) => `/api/timeline?q=${t.secret}`),
  get('timeline as text', (t) => `/api/timeline?anchor=${t.obsId}&format=text`),
  get('observations by id', (t) => `/api/observations?ids=${t.obsId},${t.obsId - 1}`),
  get('session status', (t) => `/api/sessions/${enc(t.sessionKey)}/status`),
  get('viewer feed by project', (t) => `/api/viewer/feed?project=${enc(t.key)}`),
  get('viewer session', (t) => `/api/viewer/sessions/${t.sessionId}`),
  get('handoff by session', (t) => `/api/handoff?session=${enc(t.sessionKey)}`),
  get('handoff as text', (t) => `/api/handoff?session=${enc(t.sessionKey)}&format=text`),
  get('handoff of the latest session', (t) => `/api/handoff?last=1&project=${enc(t.key)}`),
];

/** Ingest probes reuse A's session ids, event ids and project keys, but carry none of A's words (they become B's own memory). */
const WRITE_PROBES: Probe[] = [
  post('ingest init', '/api/sessions/init', (t) => event(t, 'init', { prompt: 'hello' })),
  post('ingest observation', '/api/sessions/observations', (t) =>
    event(t, 'obs', { tool_name: 'Read', tool_input: { file_path: 'src/neutral.ts' }, tool_response: 'x' }),
  ),
  post('ingest summarize', '/api/sessions/summarize', (t) => event(t, 'sum', { last_assistant_message: 'done' })),
  post('ingest end', '/api/sessions/end', (t) => event(t, 'end', { reason: 'exit' })),
  post('ingest batch', '/api/events/batch', (t) => ({
    events: [{ kind: 'init', ...event(t, 'batch', { prompt: 'again' }) }],
  })),
];

/** Admin probes from another team's owner: every id or key of team A must be a plain not-found. */
interface AdminProbe {
  name: string;
  method: 'POST' | 'PATCH' | 'DELETE';
  path: (t: Target, tokenId: number) => string;
  body?: (t: Target, ownKey: string) => unknown;
}

const ADMIN_PROBES: AdminProbe[] = [
  { name: 'revoke token', method: 'POST', path: (_t, id) => `/api/admin/tokens/${id}/revoke` },
  { name: 'rotate token', method: 'POST', path: (_t, id) => `/api/admin/tokens/${id}/rotate` },
  {
    name: 'change role',
    method: 'PATCH',
    path: (t) => `/api/admin/users/${t.handle}`,
    body: () => ({ role: 'admin' }),
  },
  { name: 'remove user', method: 'DELETE', path: (t) => `/api/admin/users/${t.handle}` },
  {
    name: 'enroll device for user',
    method: 'POST',
    path: () => '/api/admin/devices',
    body: (t) => ({ user: t.handle, name: 'probe' }),
  },
  {
    name: 'rename project',
    method: 'POST',
    path: () => '/api/admin/projects/rename',
    body: (t) => ({ from: t.key, to: `github.com/${t.secret}/renamed` }),
  },
  {
    name: 'merge project away',
    method: 'POST',
    path: () => '/api/admin/projects/merge',
    body: (t, own) => ({ from: t.key, into: own }),
  },
  {
    name: 'merge into project',
    method: 'POST',
    path: () => '/api/admin/projects/merge',
    body: (t, own) => ({ from: own, into: t.key }),
  },
  {
    name: 'set visibility',
    method: 'POST',
    path: () => '/api/admin/projects/visibility',
    body: (t) => ({ key: t.key, visibility: 'team' }),
  },
];

// Each walk makes dozens of requests; a shared 2-core machine needs more than the default 5 s.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let A: { owner: TestIdentity; ids: Ids; real: Target; adm: Target; mate: TestIdentity & { token_id: number } };
/** A team whose only project is private, so a teammate's answers carry no noise from visible memory. */
let P: { owner: TestIdentity; priv: Target; mate: TestIdentity };
let B: { owner: TestIdentity; ids: Ids; ownKey: string };

beforeAll(async () => {
  // Six-digit ids, so a real id can be told apart from other numbers in an answer when normalising.
  await env.DB.prepare("DELETE FROM sqlite_sequence WHERE name IN ('observations', 'summaries', 'sessions')").run();
  await env.DB.prepare(
    "INSERT INTO sqlite_sequence (name, seq) VALUES ('observations', 100000), ('summaries', 200000), ('sessions', 300000)",
  ).run();
  const owner = await newOwner();
  const ids = await idsOf(owner);
  const real = await seedTarget(owner, ids, 'team');
  // Ingest probes legitimately create B's own project under A's key, so admin probes aim at another one.
  const adm = await seedTarget(owner, ids, 'team');
  // A's own ingest makes its event ids and session keys real, so a foreign reuse can be checked.
  await call('/api/sessions/init', { token: owner.token, json: event(real, 'init', { prompt: 'hello' }) });
  await call('/api/events/batch', {
    token: owner.token,
    json: { events: [{ kind: 'init', ...event(real, 'batch', { prompt: 'again' }) }] },
  });
  await call('/api/admin/backfill-vectors', { token: owner.token, method: 'POST' });
  const m = await addTeammate(owner, fresh('mate'));
  A = {
    owner,
    ids,
    real,
    adm,
    mate: { token: m.token, token_id: m.token_id, team: owner.team, user: m.user, device: m.device },
  };
  const bOwner = await newOwner();
  const bIds = await idsOf(bOwner);
  const ownKey = `github.com/${fresh('b')}/own`;
  await seedProject(bIds, ownKey);
  B = { owner: bOwner, ids: bIds, ownKey };
  const pOwner = await newOwner();
  const priv = await seedTarget(pOwner, await idsOf(pOwner), 'private');
  const pMate = await addTeammate(pOwner, fresh('mate'));
  P = { owner: pOwner, priv, mate: { token: pMate.token, team: pOwner.team, user: pMate.user, device: pMate.device } };
});

/** Runs a probe at the real target and at a ghost; the two answers must be the same. */
async function expectIndistinguishable(p: Probe, token: string, real: Target, control?: string, g: Target = ghost()) {
  const a = await p.run(token, real);
  const z = await p.run(token, g);
  // A probe whose route is gone (renamed, unmounted) proves nothing: it fails instead of passing as a 404.
  await expectRoute(a, p.name);
  await expectRoute(z, p.name);
  const aText = await normalised(a, valuesOf(real));
  const zText = await normalised(z, valuesOf(g));
  expect(aText, `${p.name}: answer about the real target differs from a ghost`).toBe(zText);
  expect(aText).not.toContain(real.secret);
  if (control && p.read) {
    const own = await normalised(await p.run(control, real), valuesOf(real));
    expect(own, `${p.name}: control — the owner should see something here`).not.toBe(aText);
  }
}

describe("team B's token against team A's data", () => {
  it('reads nothing through any recall, search, timeline, status or viewer route', async () => {
    const before = await teamSnapshot(A.ids.teamId);
    for (const p of READ_PROBES) await expectIndistinguishable(p, B.owner.token, A.real, A.owner.token);
    expect(await teamSnapshot(A.ids.teamId)).toBe(before);
  });

  it('lists and counts none of it in project, author, feed, token and audit listings', async () => {
    for (const path of [
      '/api/projects',
      '/api/viewer/feed',
      '/api/viewer/authors',
      '/api/admin/projects',
      '/api/admin/users',
      '/api/admin/tokens',
      '/api/admin/devices',
      '/api/admin/audit',
      '/api/search?q=ledger%20reconciliation',
    ]) {
      const res = await call(path, { token: B.owner.token });
      await expectRoute(res, path);
      const text = await res.text();
      expect(res.status, path).toBe(200);
      for (const v of [A.real.key, A.real.secret, A.adm.key, P.priv.key, A.owner.user, A.mate.user, A.owner.team])
        expect(text, path).not.toContain(v);
    }
  });

  it("cannot subscribe to the live stream of A's project", async () => {
    const statusOf = async (key: string) => {
      const res = await call(`/api/live?project=${enc(key)}`, { token: B.owner.token });
      const body = res.status === 200 ? '' : await res.text();
      if (res.status === 200) await res.body?.cancel();
      return `${res.status} ${body}`;
    };
    const g = ghost();
    expect((await statusOf(A.real.key)).replace(A.real.key, '<X>')).toBe((await statusOf(g.key)).replace(g.key, '<X>'));
  });

  it('finds none of it by meaning through the vector index either', async () => {
    const res = await call('/api/search?q=nightly%20payment%20ledger%20reconciliation', { token: B.owner.token });
    await expectRoute(res, 'search');
    const body = (await res.json()) as { results: { title: string }[]; total: number };
    expect(body.total).toBe(0);
    const own = (await (
      await call('/api/search?q=nightly%20payment%20ledger%20reconciliation', { token: A.owner.token })
    ).json()) as { total: number };
    expect(own.total).toBeGreaterThan(0);
  });

  it("cannot reach or disturb A through ingest: reused session ids, event ids and project keys stay B's own", async () => {
    const before = await teamSnapshot(A.ids.teamId);
    // One ghost for the whole sequence: both sides then build up the same session history.
    const g = ghost();
    for (const p of WRITE_PROBES) await expectIndistinguishable(p, B.owner.token, A.real, undefined, g);
    expect(await teamSnapshot(A.ids.teamId)).toBe(before);
  });

  it('cannot administer A: tokens, users, projects and devices of A are plain not-found', async () => {
    const before = await teamSnapshot(A.ids.teamId);
    for (const p of ADMIN_PROBES) {
      const g = ghost();
      const send = (t: Target, tokenId: number) =>
        call(p.path(t, tokenId), { token: B.owner.token, method: p.method, json: p.body?.(t, B.ownKey) });
      const a = await send(A.adm, A.mate.token_id);
      const z = await send(g, 987_654_329);
      await expectRoute(a, p.name);
      expect(await normalised(a, valuesOf(A.adm)), p.name).toBe(await normalised(z, valuesOf(g)));
      expect(a.status, p.name).toBe(404);
    }
    expect(await teamSnapshot(A.ids.teamId)).toBe(before);
    // B's own audit log shows nothing of A either.
    expect(await (await call('/api/admin/audit', { token: B.owner.token })).text()).not.toContain(A.real.key);
  });

  it('reads, finds, remembers into and forgets nothing of A through the MCP tools', async () => {
    // A fresh outsider with no memory of its own: fuzzy (vector) matches against B's own rows would be noise.
    const outsider = await newOwner();
    const tools = await mcpTools(outsider.token);
    expect(tools, 'the MCP route answers tools/list').not.toBeNull();
    if (!tools) return;
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['search', 'timeline', 'get_observations', 'forget']));
    const idsArg = (tool: string, id: number) =>
      (tools.find((t) => t.name === tool)?.inputSchema?.properties ?? {}).ids ? { ids: [id] } : { id };
    const callTool = async (token: string, name: string, args: Record<string, unknown>) =>
      mcp(token, 'tools/call', { name, arguments: args });
    // A.adm: a project key B never ingested under, so B has nothing of its own there either.
    const before = await teamSnapshot(A.ids.teamId);
    const cases: [string, (t: Target) => Record<string, unknown>][] = [
      ['search', (t) => ({ query: t.secret })],
      ['search', (t) => ({ query: t.secret, project: t.key })],
      ['search', (t) => ({ query: t.secret, kind: 'all' })],
      ['get_observations', (t) => ({ ids: [`S${t.summaryId}`] })],
      ['timeline', (t) => ({ anchor: t.obsId })],
      ['timeline', (t) => ({ query: t.secret })],
      ['get_observations', (t) => ({ ids: [t.obsId] })],
      ['forget', (t) => idsArg('forget', t.obsId)],
    ];
    if (names.includes('remember')) cases.push(['remember', (t) => ({ text: `note about ${t.key}`, project: t.key })]);
    for (const [tool, args] of cases) {
      const g = ghost();
      const a = await callTool(outsider.token, tool, args(A.adm));
      const z = await callTool(outsider.token, tool, args(g));
      const norm = (r: { status: number; text: string }, t: Target) =>
        normalised(new Response(r.text, { status: r.status }), valuesOf(t));
      // `remember` mints a new id each call; any id left after normalising is the outsider's own new row.
      const fresh_ = (t: string) => (tool === 'remember' ? t.replace(/#\d+/g, '#N') : t);
      expect(fresh_(await norm(a, A.adm)), tool).toBe(fresh_(await norm(z, g)));
      expect(a.text).not.toContain(A.adm.secret);
    }
    expect(await teamSnapshot(A.ids.teamId)).toBe(before);
    const control = await callTool(A.owner.token, 'search', { query: A.adm.secret });
    expect(control.text).toContain(A.adm.secret);
  });
});

describe('the one visibility rule', () => {
  // The routes run in this isolate (same module instances as the test), so the rule's use counter is shared.
  it('is what every read route and listing of the walk builds its query from', async () => {
    // (/api/viewer/authors is left out: it lists the team's members, not memory of any project.)
    const listings = ['/api/projects', '/api/viewer/feed', '/api/admin/projects', '/api/search?q=ledger'];
    const probes = [...READ_PROBES, ...listings.map((path) => get(path, () => path))];
    for (const p of probes) {
      const before = visibilityRuleUses();
      const res = await p.run(A.owner.token, A.real);
      await res.arrayBuffer();
      expect(visibilityRuleUses(), `${p.name} answered without the visibility rule`).toBeGreaterThan(before);
    }
  });
});

describe('a private project and a teammate', () => {
  it('is invisible to the teammate in every read route', async () => {
    for (const p of READ_PROBES) await expectIndistinguishable(p, P.mate.token, P.priv, P.owner.token);
    for (const path of ['/api/projects', '/api/viewer/feed', `/api/search?q=${P.priv.secret}`]) {
      const res = await call(path, { token: P.mate.token });
      await expectRoute(res, path);
      expect(await res.text(), path).not.toContain(P.priv.secret);
    }
  });

  it('is invisible to the teammate through MCP', async () => {
    const tools = await mcpTools(P.mate.token);
    expect(tools, 'the MCP route answers tools/list').not.toBeNull();
    const r = await mcp(P.mate.token, 'tools/call', { name: 'search', arguments: { query: P.priv.secret } });
    expect(r.text).not.toContain(P.priv.secret);
    const all = await mcp(P.mate.token, 'tools/call', {
      name: 'search',
      arguments: { query: P.priv.secret, kind: 'all' },
    });
    expect(all.text).not.toContain(P.priv.secret);
    const own = await mcp(P.owner.token, 'tools/call', {
      name: 'search',
      arguments: { query: P.priv.secret, kind: 'prompts' },
    });
    expect(own.text).toContain(`${P.priv.secret} prompt text`);
    const g = await mcp(P.mate.token, 'tools/call', { name: 'get_observations', arguments: { ids: [P.priv.obsId] } });
    expect(g.text).not.toContain(P.priv.secret);
  });

  it("keeps a teammate's writes under the same key out of the private project", async () => {
    const pid = (await env.DB.prepare('SELECT id FROM projects WHERE key = ?')
      .bind(P.priv.key)
      .first<{ id: number }>())!.id;
    const before = await env.DB.prepare('SELECT COUNT(*) AS n FROM observations WHERE project_id = ?')
      .bind(pid)
      .first<{ n: number }>();
    await mcp(P.mate.token, 'tools/call', {
      name: 'remember',
      arguments: { project: P.priv.key, text: 'a teammate note' },
    });
    const after = await env.DB.prepare('SELECT COUNT(*) AS n FROM observations WHERE project_id = ?')
      .bind(pid)
      .first<{ n: number }>();
    expect(after?.n).toBe(before?.n);
    // The teammate's note went to their own private shadow of the key, and they can read it back under that key.
    const own = await (
      await call(`/api/context?project=${encodeURIComponent(P.priv.key)}`, { token: P.mate.token })
    ).text();
    expect(own).toContain('a teammate note');
    expect(own).not.toContain(P.priv.secret);
  });

  it('appears to the teammate once made team-visible, except its sensitive rows', async () => {
    const res = await call('/api/admin/projects/visibility', {
      token: P.owner.token,
      json: { key: P.priv.key, visibility: 'team' },
    });
    expect(res.status).toBe(200);
    const search = await call(`/api/search?q=${P.priv.secret}`, { token: P.mate.token });
    const body = (await search.json()) as { results: { title: string }[] };
    expect(body.results.length).toBeGreaterThan(0);
    expect(body.results.some((r) => r.title.includes('sensitive'))).toBe(false);
    const projects = await (await call('/api/projects', { token: P.mate.token })).text();
    expect(projects).toContain(P.priv.key);
    await call('/api/admin/projects/visibility', {
      token: P.owner.token,
      json: { key: P.priv.key, visibility: 'private' },
    });
    expect(await (await call(`/api/search?q=${P.priv.secret}`, { token: P.mate.token })).text()).not.toContain(
      P.priv.secret,
    );
  });
});
