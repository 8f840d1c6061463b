// Evidence at the session-start index (issue 34), on real D1: POST /api/context takes the device's checkout report,
// judges every candidate against it (changed rows marked, gone rows left out), answers what to report next, and
// afterwards takes a bare digest or a change against the acknowledged state. Bad reports are 4xx, never a 500.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { canonicalEntries, evidenceKey, fileEntry, fileKey, type CheckoutEntries } from '../../../src/shared/evidence';
import type { WireContextAnswer } from '../../../src/shared/wire/checkout';
import { sha256Hex } from '../../../src/lib/crypto';
import { watchInvocations, type Usage } from '../../../src/db/meter';
import { call, fresh, newIdentity, type TestIdentity } from '../support/http';
import { idsOf, seedProject, seedSession, type Ids } from '../support/seed';
import { blob, seedCited, ws } from './support';

const T0 = Date.parse('2026-06-01T09:00:00Z');
const A = blob('a');
const B = blob('b');
const C = blob('c');

interface World {
  me: TestIdentity;
  ids: Ids;
  key: string;
  projectId: number;
  rows: Record<string, number>;
}

/** Three records: one on src/config.ts naming parseConfig, one on src/old.ts, one on src/util.ts; all at blob A. */
async function world(me?: TestIdentity): Promise<World> {
  const who = me ?? (await newIdentity());
  const ids = await idsOf(who);
  const key = `github.com/acme/${fresh('repo')}`;
  const projectId = await seedProject(ids, key);
  const session = await seedSession(ids, projectId, fresh('s'), T0);
  const rows = {
    config: await seedCited(ids, projectId, session, {
      title: 'parseConfig() validates the port before the host',
      files: [{ path: 'src/config.ts', blob: A, ws: ws('1'), kind: 'read' }],
      createdAt: T0 + 60_000,
    }),
    old: await seedCited(ids, projectId, session, {
      title: 'The legacy loader reads YAML',
      files: [{ path: 'src/old.ts', blob: A, kind: 'read' }],
      createdAt: T0 + 120_000,
    }),
    util: await seedCited(ids, projectId, session, {
      title: 'The retry helper doubles its wait',
      files: [{ path: 'src/util.ts', blob: A, kind: 'modified', base: C }],
      createdAt: T0 + 180_000,
    }),
  };
  return { me: who, ids, key, projectId, rows };
}

const digestOf = (e: CheckoutEntries) => sha256Hex(canonicalEntries(e));
const lineOf = (text: string, id: number) => text.split('\n').find((l) => l.startsWith(`${id} `));

async function ask(w: World, checkout: Record<string, unknown> | undefined, token = w.me.token) {
  const res = await call('/api/context', { token, json: { project: w.key, checkout } });
  return { status: res.status, body: (await res.json()) as WireContextAnswer & { error?: { code: string } } };
}

/** config.ts changed and parseConfig gone from it, old.ts deleted, util.ts as recorded. */
const changedState = (): CheckoutEntries => ({
  [fileKey('src/config.ts')]: fileEntry({ blob: B, ws: ws('2'), missing: [evidenceKey('parseConfig')] }),
  [fileKey('src/old.ts')]: '-',
  [fileKey('src/util.ts')]: fileEntry({ blob: A, missing: [] }),
});

describe('POST /api/context with a checkout report', () => {
  it('marks a changed record with code changed and the names gone, leaves a gone one out, keeps a current one plain', async () => {
    const w = await world();
    const state = changedState();
    const { status, body } = await ask(w, { digest: await digestOf(state), set: state });
    expect(status).toBe(200);
    expect(lineOf(body.text, w.rows.config!)).toMatch(/\(code changed: parseConfig no longer in the code\)$/);
    expect(lineOf(body.text, w.rows.old!)).toBeUndefined();
    expect(lineOf(body.text, w.rows.util!)).toMatch(/The retry helper doubles its wait$/);
    expect(body.checkout).toEqual({ digest: await digestOf(state), need: false, unreported: 0 });
    // What to report next: every cited file, with the identifiers of the records citing it; newest record first.
    expect(body.watch!.files).toEqual([
      { path: 'src/util.ts', names: [] },
      { path: 'src/old.ts', names: [] },
      { path: 'src/config.ts', names: ['parseConfig'] },
    ]);
  });

  it('answers an index without evidence for the first report, and names the files to report', async () => {
    const w = await world();
    const { body } = await ask(w, { digest: await digestOf({}), set: {} });
    for (const id of Object.values(w.rows)) expect(lineOf(body.text, id)).not.toMatch(/code changed/);
    expect(body.checkout.unreported).toBe(3);
    expect(body.watch!.files.map((f) => f.path).sort()).toEqual(['src/config.ts', 'src/old.ts', 'src/util.ts']);
  });

  it('sends the watch only when it is not the one the client holds', async () => {
    const w = await world();
    const first = await ask(w, { digest: await digestOf({}), set: {} });
    expect(first.body.watch).not.toBeNull();
    const again = await ask(w, { digest: await digestOf({}), watch: first.body.watch_digest });
    expect(again.body.watch).toBeNull();
    expect(again.body.watch_digest).toBe(first.body.watch_digest);
  });

  it('takes a bare digest for the state it holds, and asks for the whole state when it holds none', async () => {
    const w = await world();
    const state = changedState();
    const digest = await digestOf(state);
    await ask(w, { digest, set: state });
    const again = await ask(w, { digest });
    expect(again.body.checkout).toEqual({ digest, need: false, unreported: 0 });
    expect(lineOf(again.body.text, w.rows.old!)).toBeUndefined();
    const unknown = await ask(w, { digest: 'f'.repeat(64) });
    expect(unknown.body.checkout.need).toBe(true);
    // Still an index, judged by what it holds.
    expect(lineOf(unknown.body.text, w.rows.old!)).toBeUndefined();
  });

  it('costs a teammate nothing more for a state of the project the server has already seen', async () => {
    const w = await world();
    const state = changedState();
    const digest = await digestOf(state);
    await ask(w, { digest, set: state });
    const mate = await newIdentity({ team: w.me.team });
    const { body } = await ask(w, { digest }, mate.token);
    expect(body.checkout).toEqual({ digest, need: false, unreported: 0 });
    expect(lineOf(body.text, w.rows.config!)).toMatch(/code changed/);
  });

  it('applies changes against the acknowledged state, and asks for the whole state when the base is not its own', async () => {
    const w = await world();
    const state = changedState();
    const digest = await digestOf(state);
    await ask(w, { digest, set: state });
    const next = { ...state, [fileKey('src/util.ts')]: fileEntry({ blob: B, missing: [] }) };
    delete next[fileKey('src/old.ts')];
    const nextDigest = await digestOf(next);
    const delta = await ask(w, {
      digest: nextDigest,
      base: digest,
      set: { [fileKey('src/util.ts')]: next[fileKey('src/util.ts')] },
      drop: [fileKey('src/old.ts')],
    });
    expect(delta.body.checkout).toEqual({ digest: nextDigest, need: false, unreported: 1 });
    expect(lineOf(delta.body.text, w.rows.util!)).toMatch(/\(code changed\)$/);
    // src/old.ts is no longer reported: its record is unknown again, so it is back in the index, unmarked.
    expect(lineOf(delta.body.text, w.rows.old!)).toMatch(/The legacy loader reads YAML$/);
    const stale = await ask(w, { digest: nextDigest, base: digest, set: {} });
    expect(stale.body.checkout.need).toBe(true);
  });

  it('marks a record whose change was undone in the checkout as reverted', async () => {
    const w = await world();
    const state = { [fileKey('src/util.ts')]: fileEntry({ blob: C, missing: [] }) };
    const { body } = await ask(w, { digest: await digestOf(state), set: state });
    expect(lineOf(body.text, w.rows.util!)).toMatch(/\(code changed: its change was reverted\)$/);
  });

  it('keeps each device’s checkout its own', async () => {
    const w = await world();
    const state = changedState();
    await ask(w, { digest: await digestOf(state), set: state });
    const mate = await newIdentity({ team: w.me.team });
    const text = await (await call(`/api/context?project=${encodeURIComponent(w.key)}`, { token: mate.token })).text();
    for (const id of Object.values(w.rows)) expect(lineOf(text, id)).not.toMatch(/code changed/);
    expect(lineOf(text, w.rows.old!)).toBeDefined();
  });

  it('judges GET /api/context by the checkout the device last reported', async () => {
    const w = await world();
    const state = changedState();
    await ask(w, { digest: await digestOf(state), set: state });
    const text = await (await call(`/api/context?project=${encodeURIComponent(w.key)}`, { token: w.me.token })).text();
    expect(lineOf(text, w.rows.config!)).toMatch(/code changed/);
    expect(lineOf(text, w.rows.old!)).toBeUndefined();
  });

  it('stores no path, branch or name in the clear: only keys and ids', async () => {
    const w = await world();
    const state = changedState();
    await ask(w, { digest: await digestOf(state), set: state });
    const row = await env.DB.prepare('SELECT * FROM checkouts WHERE team_id = ? AND project_id = ?')
      .bind(w.ids.teamId, w.projectId)
      .first<Record<string, unknown>>();
    expect(row).not.toBeNull();
    const stored = JSON.stringify(row);
    for (const text of ['config', 'old.ts', 'parseConfig', 'src/']) expect(stored).not.toContain(text);
  });

  it('checks 200 candidates with 2 statements more than the plain index, and writes nothing for a bare digest', async () => {
    const w = await world();
    const session = await seedSession(w.ids, w.projectId, fresh('s'), T0);
    for (let i = 0; i < 197; i++)
      await seedCited(w.ids, w.projectId, session, {
        title: `handler${i} trims its input`,
        files: [{ path: `src/m${i}.ts`, blob: A, kind: 'read' }],
        createdAt: T0 + 1_000_000 + i,
      });
    const state = changedState();
    const digest = await digestOf(state);
    await ask(w, { digest, set: state });
    const reportedAt = () =>
      env.DB.prepare('SELECT reported_at AS at FROM checkouts WHERE team_id = ? AND project_id = ?')
        .bind(w.ids.teamId, w.projectId)
        .first<{ at: number }>();
    const before = await reportedAt();
    const seen: Usage[] = [];
    const stop = watchInvocations((u) => seen.push(u));
    const statements = async (run: () => Promise<unknown>) => {
      seen.length = 0;
      await run();
      return seen.filter((u) => u.label.startsWith('fetch ')).reduce((n, u) => n + u.statements, 0);
    };
    const mate = await newIdentity({ team: w.me.team });
    // Both tokens known to the isolate first: a token's first use reads it (not what is compared here).
    await call(`/api/context?project=${encodeURIComponent(w.key)}`, { token: mate.token });
    const plain = await statements(() =>
      call(`/api/context?project=${encodeURIComponent(w.key)}&observations=100`, { token: mate.token }),
    );
    const checked = await statements(async () => {
      const res = await call('/api/context', {
        token: w.me.token,
        json: { project: w.key, observations: 100, checkout: { digest } },
      });
      expect(((await res.json()) as WireContextAnswer).checkout.need).toBe(false);
    });
    stop();
    // The candidates' evidence, one batch of two statements whatever their number; the device's row is read by both.
    expect(checked - plain).toBe(2);
    expect(await reportedAt()).toEqual(before);
  });

  it.each([
    ['an entry key that is not a key', { set: { 'src/config.ts': '-' } }],
    ['an entry value that is not an id', { set: { [fileKey('a')]: 'rm -rf' } }],
    ['a digest that is not SHA-256 hex', { digest: 'abc' }],
    ['drop without a base', { drop: [fileKey('a')] }],
    ['too many entries', { set: Object.fromEntries(Array.from({ length: 851 }, (_, i) => [fileKey(`f${i}`), '-'])) }],
  ])('refuses %s with 400 invalid_body, storing nothing', async (_what, extra) => {
    const w = await world();
    const { status, body } = await ask(w, { digest: 'e'.repeat(64), ...extra });
    expect(status).toBe(400);
    expect(body.error?.code).toBe('invalid_body');
    const n = await env.DB.prepare('SELECT COUNT(*) AS n FROM checkouts WHERE team_id = ?')
      .bind(w.ids.teamId)
      .first<{ n: number }>();
    expect(n?.n).toBe(0);
  });
});
