// Use-based fading (issue 34) on real D1: a record nobody used within the team's fade_after_days (default 90) leaves
// the context index but stays stored, and search still finds it, marked faded; a fetch, `useful` feedback, or an
// injection followed by a fetch renews it; being judged `current` does not. Time is passed in: the tests move `now`
// past the database's fade epoch (migration 0027), which is when this database began recording use.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../../../src/auth/types';
import { lookupToken } from '../../../src/auth/tokens';
import { giveFeedback, recordFetched } from '../../../src/corrections/service';
import { fadeEpochOf } from '../../../src/db/fading';
import { contextText } from '../../../src/recall/service';
import { recordInjection, recordMcpAnswer } from '../../../src/receipts/record';
import { renderSearchText } from '../../../src/search/render';
import { searchObservations } from '../../../src/search/search';
import { fileEntry, fileKey } from '../../../src/shared/evidence';
import { call, forgetTokenMemo, fresh, newIdentity, type TestIdentity } from '../support/http';
import { idsOf, seedObservation, seedProject, seedSession } from '../support/seed';
import { blob, seedCited } from '../evidence/support';

const DAY = 86_400_000;

async function authOf(me: TestIdentity): Promise<AuthContext> {
  const { check } = await lookupToken(env.DB, me.token, Date.now());
  if (!check.ok) throw new Error('token refused');
  return check.auth;
}

/**
 * A project with an old record (made at the epoch, never used) and a new one (made a day before `later`), where
 * `later` is 100 days past the epoch: by default the old one has faded by then.
 */
async function world() {
  const me = await newIdentity();
  const ids = await idsOf(me);
  const key = `github.com/acme/${fresh('fade')}`;
  const projectId = await seedProject(ids, key);
  const session = await seedSession(ids, projectId, fresh('s'));
  const epoch = await fadeEpochOf(env.DB);
  const later = Math.max(epoch, Date.now()) + 100 * DAY;
  const word = fresh('heron').replace(/[^a-z]/g, '');
  const old = await seedCited(ids, projectId, session, {
    title: `The ${word} cache is rebuilt at start`,
    files: [{ path: 'src/cache.ts', blob: blob('a'), kind: 'read' }],
    createdAt: epoch - DAY,
  });
  const recent = await seedObservation(ids, projectId, session, {
    title: `The ${word} queue drains on stop`,
    createdAt: later - DAY,
  });
  return { me, ids, key, projectId, epoch, later, word, old, recent, auth: await authOf(me) };
}

type World = Awaited<ReturnType<typeof world>>;

const index = (w: World, now: number, auth = w.auth) =>
  contextText(env, auth, { projects: [w.key], timeZone: 'UTC', now });
const has = (text: string, id: number) => text.split('\n').some((l) => l.startsWith(`${id} `));

describe('use-based fading', () => {
  it('leaves a record nobody used for fade_after_days out of the index, keeps it stored, and search finds it marked faded', async () => {
    const w = await world();
    // Within the window (the epoch is recent) nothing has faded.
    expect(has(await index(w, Date.now()), w.old)).toBe(true);
    const later = await index(w, w.later);
    expect(has(later, w.old)).toBe(false);
    expect(has(later, w.recent)).toBe(true);
    // Never deleted: the row is where it was.
    const row = await env.DB.prepare('SELECT id FROM observations WHERE id = ?').bind(w.old).first();
    expect(row).not.toBeNull();
    const found = await searchObservations(env, w.auth, { q: w.word, project: [w.key] }, { now: w.later });
    const byId = new Map(found.results.map((r) => [r.id, r]));
    expect(byId.get(w.old)?.faded).toBe(true);
    expect(byId.get(w.recent)?.faded).toBeUndefined();
    expect(
      renderSearchText(found)
        .split('\n')
        .find((l) => l.startsWith(`#${w.old} `)),
    ).toMatch(/\[faded\]/);
  });

  it('takes fade_after_days from the team settings (PATCH /api/admin/settings)', async () => {
    const w = await world();
    const res = await call('/api/admin/settings', {
      method: 'PATCH',
      token: w.me.token,
      json: { fade_after_days: 200 },
    });
    expect(res.status).toBe(200);
    forgetTokenMemo();
    const auth = await authOf(w.me);
    expect(has(await index(w, w.later, auth), w.old)).toBe(true);
    expect(has(await index(w, w.epoch + 201 * DAY, auth), w.old)).toBe(false);
    const bad = await call('/api/admin/settings', { method: 'PATCH', token: w.me.token, json: { fade_after_days: 0 } });
    expect(bad.status).toBe(400);
  });

  it('is renewed by a fetch: the record is back in the index for another window', async () => {
    const w = await world();
    await recordFetched(env, w.auth, [w.old], w.later - 10 * DAY);
    expect(has(await index(w, w.later), w.old)).toBe(true);
    // …until that window ends too.
    expect(has(await index(w, w.later + 81 * DAY), w.old)).toBe(false);
  });

  it('is renewed by useful feedback', async () => {
    const w = await world();
    await giveFeedback(env, w.auth, { id: w.old, kind: 'useful' }, w.later - 10 * DAY);
    expect(has(await index(w, w.later), w.old)).toBe(true);
  });

  it('is renewed when an injection sent it and the session then fetched it', async () => {
    const w = await world();
    const session = fresh('sess');
    const at = w.later - 10 * DAY;
    await recordInjection(env.DB, w.auth, {
      sessionKey: session,
      projectId: w.projectId,
      channel: 'index',
      sent: [{ id: w.old }],
      now: at,
      start: true,
    });
    await recordFetched(env, w.auth, [w.old], at + 1);
    await recordMcpAnswer(env.DB, w.auth, { sent: [], fetched: [w.old], now: at + 1 });
    expect(has(await index(w, w.later), w.old)).toBe(true);
    const signals = await env.DB.prepare('SELECT fetched, used FROM observation_signals WHERE observation_id = ?')
      .bind(w.old)
      .first<{ fetched: number; used: number }>();
    expect(signals).toEqual({ fetched: 1, used: 1 });
  });

  it('is not renewed by being judged current, nor by being sent without a fetch', async () => {
    const w = await world();
    const state = { [fileKey('src/cache.ts')]: fileEntry({ blob: blob('a'), missing: [] }) };
    const { sha256Hex } = await import('../../../src/lib/crypto');
    const { canonicalEntries } = await import('../../../src/shared/evidence');
    const report = { digest: await sha256Hex(canonicalEntries(state)), set: state };
    const res = await call('/api/context', {
      token: w.me.token,
      json: { project: w.key, checkout: report, session: fresh('sess') },
    });
    expect(res.status).toBe(200);
    // The record was sent (and judged current) today: still not a use.
    expect(has(((await res.json()) as { text: string }).text, w.old)).toBe(true);
    expect(has(await index(w, w.later), w.old)).toBe(false);
  });
});
