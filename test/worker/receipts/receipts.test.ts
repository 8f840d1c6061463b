// Receipts (issue 34) on real D1 and the real MCP route: each injection (the SessionStart index, prompt context, file
// context before a Read, MCP answers) records which records it sent into the agent's session and how each was
// judged; `GET /api/receipts` and the status line's counts read them; a record an injection sent that the session
// then fetches counts as used once. Bounded per session, deleted with the record, the session and the project
// (storage scanned), and never a way to see another member's private rows.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import worker from '../../../src/index';
import { lookupToken } from '../../../src/auth/tokens';
import { receiptWrites, SESSION_RECEIPTS_MAX } from '../../../src/db/receipts';
import { db } from '../../../src/db/client';
import { sha256Hex } from '../../../src/lib/crypto';
import { recordInjection } from '../../../src/receipts/record';
import { canonicalEntries, evidenceKey, fileEntry, fileKey, type CheckoutEntries } from '../../../src/shared/evidence';
import type { WireReceipts } from '../../../src/shared/wire/receipts';
import type { SessionView } from '../../../src/shared/wire/feed';
import { BASE, call, fresh, newIdentity, type TestIdentity } from '../support/http';
import { idsOf, seedObservation, seedProject, seedSession, type Ids } from '../support/seed';
import { runOpenJobs, runJob } from '../support/jobs';
import { d1Holding, secretWord } from '../support/storage-scan';
import { blob, seedCited } from '../evidence/support';

const A = blob('a');
const B = blob('b');

/** An MCP client whose requests' deferred work (receipts, fetch counts) the test can wait for. */
async function connect(token: string) {
  const pending: ExecutionContext[] = [];
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), {
    fetch: async (url, init) => {
      const ctx = createExecutionContext();
      pending.push(ctx);
      return worker.fetch(new Request(url, init), env, ctx);
    },
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'cairn-receipts-test', version: '0.0.0' });
  await client.connect(transport);
  const tool = async (name: string, args: Record<string, unknown>) => {
    const r = await client.callTool({ name, arguments: args });
    for (const ctx of pending.splice(0)) await waitOnExecutionContext(ctx);
    return r as { content: { text: string }[] };
  };
  return { tool };
}

interface World {
  me: TestIdentity;
  ids: Ids;
  key: string;
  projectId: number;
  word: string;
  rows: { current: number; changed: number };
}

/** Two records of one project: one on a file still as it was, one on a file that changed (its name gone). */
async function world(me?: TestIdentity): Promise<World> {
  const who = me ?? (await newIdentity());
  const ids = await idsOf(who);
  const key = `github.com/acme/${fresh('rcpt')}`;
  const projectId = await seedProject(ids, key);
  const session = await seedSession(ids, projectId, fresh('s'));
  const word = fresh('otter').replace(/[^a-z]/g, '');
  const now = Date.now();
  const rows = {
    current: await seedCited(ids, projectId, session, {
      title: `The ${word} theme lives in src/theme.ts`,
      files: [{ path: 'src/theme.ts', blob: A, kind: 'read' }],
      createdAt: now - 120_000,
    }),
    changed: await seedCited(ids, projectId, session, {
      title: `The ${word} renderer calls paintOtter first`,
      files: [{ path: 'src/render.ts', blob: A, kind: 'modified' }],
      createdAt: now - 60_000,
    }),
  };
  return { me: who, ids, key, projectId, word, rows };
}

const checkout = async (state: CheckoutEntries) => ({ digest: await sha256Hex(canonicalEntries(state)), set: state });

/** The SessionStart index of session `session`, with the checkout: render.ts changed, theme.ts as it was. */
async function sessionStart(w: World, session: string, token = w.me.token): Promise<string> {
  const res = await call('/api/context', {
    token,
    json: {
      project: w.key,
      session,
      checkout: await checkout({
        [fileKey('src/theme.ts')]: fileEntry({ blob: A, missing: [] }),
        [fileKey('src/render.ts')]: fileEntry({ blob: B, missing: [evidenceKey('paintOtter')] }),
      }),
    },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { text: string }).text;
}

async function receipts(token: string, q: string): Promise<{ status: number; body: WireReceipts }> {
  const res = await call(`/api/receipts?${q}`, { token });
  return { status: res.status, body: (await res.json()) as WireReceipts };
}

const one = async <T>(sql: string, ...binds: unknown[]) =>
  env.DB.prepare(sql)
    .bind(...binds)
    .first<T>();

describe('receipts', () => {
  it('records what the index, prompt and file context sent into a session, each with its judgement, and counts them', async () => {
    const w = await world();
    const session = fresh('sess');
    const index = await sessionStart(w, session);
    expect(index).toContain(`${w.rows.changed} `);

    const got = await receipts(w.me.token, `session=${session}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ session, project: w.key, used: 2, stale: 1 });
    const byId = new Map(got.body.memories.map((m) => [m.id, m]));
    expect(byId.get(w.rows.changed)).toMatchObject({
      channels: ['index'],
      evidence: { value: 'changed', reasons: ['code_changed', 'names_missing'] },
      sent: 1,
      fetched_at: null,
    });
    expect(byId.get(w.rows.current)).toMatchObject({ channels: ['index'], evidence: { value: 'current' } });

    const prompt = await call(
      `/api/context/prompt?project=${encodeURIComponent(w.key)}&q=theme+lives&session=${session}`,
      { token: w.me.token },
    );
    expect(await prompt.text()).toContain(`${w.rows.current}`);
    const file = await call(
      `/api/context/file?project=${encodeURIComponent(w.key)}&path=src/render.ts&blob=${B}&session=${session}`,
      { token: w.me.token },
    );
    expect(await file.text()).toContain(`${w.rows.changed}`);
    const after = new Map((await receipts(w.me.token, `session=${session}`)).body.memories.map((m) => [m.id, m]));
    expect(after.get(w.rows.current)?.channels).toEqual(['index', 'prompt']);
    expect(after.get(w.rows.changed)).toMatchObject({ channels: ['index', 'file'], sent: 2 });

    // The status line's counts come with "this session so far".
    const soFar = await call(`/api/context/session?session=${session}`, { token: w.me.token });
    expect(((await soFar.json()) as { memories: unknown }).memories).toEqual({ used: 2, stale: 1 });
    // Without a session id: the one this device started last in the project.
    const latest = await receipts(w.me.token, `project=${encodeURIComponent(w.key)}`);
    expect(latest.body.session).toBe(session);
  });

  it("files an MCP answer under the device's latest session, and counts a record injected then fetched as used once", async () => {
    const w = await world();
    // A record of another project: never in this project's index, so only ever sent by MCP.
    const elsewhere = await seedProject(w.ids, `github.com/acme/${fresh('other')}`);
    const other = await seedObservation(w.ids, elsewhere, await seedSession(w.ids, elsewhere, fresh('s')), {
      title: `A ${w.word} note from another project`,
    });
    const first = fresh('sess');
    await sessionStart(w, first);
    const mcp = await connect(w.me.token);
    await mcp.tool('get_observations', { ids: [w.rows.changed, other] });
    await mcp.tool('get_observations', { ids: [w.rows.changed] });

    const byId = new Map((await receipts(w.me.token, `session=${first}`)).body.memories.map((m) => [m.id, m]));
    expect(byId.get(w.rows.changed)?.channels).toEqual(['index', 'mcp']);
    expect(byId.get(w.rows.changed)?.fetched_at).not.toBeNull();
    // Sent by the MCP answer itself, never by an injection: fetched, but not "injected then fetched".
    expect(byId.get(other)).toMatchObject({ channels: ['mcp'], fetched_at: null });
    const used = (id: number) =>
      one<{ used: number; fetched: number }>(
        'SELECT used, fetched FROM observation_signals WHERE observation_id = ?',
        id,
      );
    expect(await used(w.rows.changed)).toEqual({ used: 1, fetched: 2 });
    expect(await used(other)).toEqual({ used: 0, fetched: 1 });

    // A newer session on the device takes the MCP answers from then on.
    const second = fresh('sess');
    await sessionStart(w, second);
    await mcp.tool('search', { query: w.word });
    const later = (await receipts(w.me.token, `session=${second}`)).body.memories;
    expect(later.find((m) => m.id === other)?.channels).toEqual(['mcp']);
    expect((await receipts(w.me.token, `session=${first}`)).body.memories.some((m) => m.channels.includes('mcp'))).toBe(
      true,
    );
  });

  it(`keeps at most ${SESSION_RECEIPTS_MAX} receipts a session, dropping the least recently sent, in four statements an injection`, async () => {
    const w = await world();
    const sid = await seedSession(w.ids, w.projectId, fresh('s'));
    const t0 = Date.now();
    const { results } = await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 230)
       INSERT INTO observations (team_id, project_id, session_id, type, title, created_at, stored_at, content_hash, author_user_id)
       SELECT ?1, ?2, ?3, 'discovery', 'bulk ' || i, ?4 + i, ?4 + i, 'bulk-' || i || '-' || ?3, ?5 FROM n RETURNING id`,
    )
      .bind(w.ids.teamId, w.projectId, sid, t0, w.ids.userId)
      .all<{ id: number }>();
    const ids = results.map((r) => r.id).sort((a, b) => a - b);
    const { check } = await lookupToken(env.DB, w.me.token, Date.now());
    if (!check.ok) throw new Error('token');
    const session = fresh('sess');
    const send = (list: number[], at: number) =>
      recordInjection(env.DB, check.auth, {
        sessionKey: session,
        projectId: w.projectId,
        channel: 'mcp',
        sent: list.map((id) => ({ id })),
        now: at,
      });
    // The older 150 first, then the newer 80: 230 sent, the 30 least recently sent go.
    await send(ids.slice(0, 150), t0 + 1);
    await send(ids.slice(150), t0 + 2);
    const kept = await env.DB.prepare(
      'SELECT observation_id AS id FROM receipts WHERE session_key = ? AND observation_id IS NOT NULL',
    )
      .bind(session)
      .all<{ id: number }>();
    expect(kept.results).toHaveLength(SESSION_RECEIPTS_MAX);
    const dropped = ids.filter((id) => !kept.results.some((r) => r.id === id));
    expect(dropped).toEqual(ids.slice(0, 30));
    // However many records an injection sends: the start mark (two), the rows, the cap.
    const s = { teamId: w.ids.teamId, sessionKey: session, projectId: w.projectId, userId: w.ids.userId, deviceId: 0 };
    const items = ids.map((id) => [id, 'unknown', ''] as const);
    expect(receiptWrites(db(env.DB), s, { channel: 'index', items, at: t0, start: true })).toHaveLength(4);
    expect(receiptWrites(db(env.DB), s, { channel: 'mcp', items: items.slice(0, 1), at: t0 })).toHaveLength(2);
  });

  it('goes from storage with its record, its session and its project', async () => {
    const w = await world();
    // The record: forgotten by id, its receipts go too.
    const session = fresh('sess');
    await sessionStart(w, session);
    const forgetRecord = await call('/api/forget', {
      token: w.me.token,
      json: { kind: 'observation', id: w.rows.changed },
    });
    expect(forgetRecord.status).toBe(200);
    expect(
      await one<{ n: number }>('SELECT COUNT(*) AS n FROM receipts WHERE observation_id = ?', w.rows.changed),
    ).toEqual({ n: 0 });

    // The session: its key is a secret word, found nowhere in D1 afterwards (sessions, receipts, any column).
    const key = secretWord();
    await seedSession(w.ids, w.projectId, key);
    await sessionStart(w, key);
    expect(await d1Holding(key)).toContain('receipts.session_key');
    const forgetSession = await call('/api/forget', { token: w.me.token, json: { kind: 'session', session_id: key } });
    expect(forgetSession.status).toBe(200);
    expect(await d1Holding(key)).toEqual([]);

    // The project: its sessions' receipts, and its records' receipts in another project's session.
    const p = await world(w.me);
    const elsewhere = fresh('sess');
    const pKey = secretWord();
    await seedSession(p.ids, p.projectId, pKey);
    await sessionStart(p, pKey);
    await sessionStart(w, elsewhere);
    const { check } = await lookupToken(env.DB, w.me.token, Date.now());
    if (!check.ok) throw new Error('token');
    await recordInjection(env.DB, check.auth, {
      sessionKey: elsewhere,
      projectId: w.projectId,
      channel: 'mcp',
      sent: [{ id: p.rows.current }],
      now: Date.now(),
    });
    const ask = await call('/api/forget', { token: w.me.token, json: { kind: 'project', project: p.key } });
    const { error } = (await ask.json()) as { error: { message: string } };
    const confirm = Number(/"confirm": (\d+)/.exec(error.message)![1]);
    const done = await call('/api/forget', { token: w.me.token, json: { kind: 'project', project: p.key, confirm } });
    expect(done.status).toBe(202);
    await runJob(w.ids.teamId, ((await done.json()) as { job: { id: string } }).job.id);
    await runOpenJobs(null, 'fts-upkeep');
    expect(await d1Holding(pKey)).toEqual([]);
    expect(
      await one<{ n: number }>(
        'SELECT COUNT(*) AS n FROM receipts WHERE project_id = ? OR observation_id IN (?, ?)',
        p.projectId,
        p.rows.current,
        p.rows.changed,
      ),
    ).toEqual({ n: 0 });
    // The other project's session keeps its own.
    expect((await receipts(w.me.token, `session=${elsewhere}`)).body.used).toBe(1);
  });

  it("never shows another member a record of someone's private project, and keeps a session's receipts its owner's", async () => {
    const w = await world();
    const mate = await newIdentity({ team: w.me.team });
    const privateKey = `github.com/acme/${fresh('mine')}`;
    const privateId = await seedProject(w.ids, privateKey, 'private');
    const secret = await seedObservation(w.ids, privateId, await seedSession(w.ids, privateId, fresh('s')), {
      title: `My private ${w.word} plan`,
    });
    const key = fresh('sess');
    await seedSession(w.ids, w.projectId, key);
    await sessionStart(w, key);
    const mcp = await connect(w.me.token);
    await mcp.tool('get_observations', { ids: [secret] });
    const mine = (await receipts(w.me.token, `session=${key}`)).body.memories.map((m) => m.id);
    expect(mine).toContain(secret);

    const page = await call(`/api/viewer/sessions?key=${key}`, { token: mate.token });
    expect(page.status).toBe(200);
    const shown = ((await page.json()) as SessionView).receipts.map((r) => r.id);
    expect(shown).toContain(w.rows.current);
    expect(shown).not.toContain(secret);
    expect((await receipts(mate.token, `session=${key}`)).status).toBe(404);
  });

  it("keeps no receipts of a session whose project the admins' capture policy turned off", async () => {
    const w = await world();
    const off = await call('/api/admin/settings', { token: w.me.token, method: 'PATCH', json: { capture: 'off' } });
    expect(off.status).toBe(200);
    const session = fresh('sess');
    expect(await sessionStart(w, session)).toContain(`${w.rows.changed} `);
    await call(`/api/context/prompt?project=${encodeURIComponent(w.key)}&q=theme+lives&session=${session}`, {
      token: w.me.token,
    });
    await call(
      `/api/context/file?project=${encodeURIComponent(w.key)}&path=src/render.ts&blob=${B}&session=${session}`,
      {
        token: w.me.token,
      },
    );
    expect(await one<{ n: number }>('SELECT COUNT(*) AS n FROM receipts WHERE team_id = ?', w.ids.teamId)).toEqual({
      n: 0,
    });
  });

  it('refuses a session id the server makes or one too long with a 400, and stores nothing', async () => {
    const w = await world();
    const before = await one<{ n: number }>('SELECT COUNT(*) AS n FROM receipts WHERE team_id = ?', w.ids.teamId);
    const refused = await call('/api/context', { token: w.me.token, json: { project: w.key, session: 'manual:1:2' } });
    expect(refused.status).toBe(400);
    const long = await call(`/api/context?project=${encodeURIComponent(w.key)}&session=${'x'.repeat(201)}`, {
      token: w.me.token,
    });
    expect(long.status).toBe(400);
    expect((await call('/api/receipts?session=import:9', { token: w.me.token })).status).toBe(400);
    expect(await one('SELECT COUNT(*) AS n FROM receipts WHERE team_id = ?', w.ids.teamId)).toEqual(before);
  });
});
