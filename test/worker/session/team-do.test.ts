// TeamDO on its own: the per-team observer slots, the shared back-off, the observer's health and the team backlog.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { runInDurableObject } from 'cloudflare:test';
import { migrateDoSqlite } from '../../../src/db/do-schema';
import { PROBE_FIRST_MS, PROBE_MAX_MS } from '../../../src/slots/observer-health';
import { SLOT_TTL_MS, TEAM_SCHEMA, teamStub } from '../../../src/slots/team-do';
import { parseConfig } from '../../../src/config';

// A team id no other test uses: storage is shared by the whole file.
const team = () => teamStub(env, crypto.getRandomValues(new Uint32Array(1))[0]!);

describe('TeamDO', () => {
  it('grants up to four observer slots and refuses the fifth until one is released', async () => {
    const t = team();
    const now = Date.now();
    for (const s of ['a', 'b', 'c', 'd']) expect((await t.acquire(s, now)).granted).toBe(true);
    const refused = await t.acquire('e', now);
    expect(refused).toMatchObject({ granted: false, reason: 'full' });
    expect(refused.retryAt).toBeGreaterThan(now);
    // A session that already holds a slot gets it again instead of a second one.
    expect((await t.acquire('a', now)).granted).toBe(true);
    await t.release('b');
    expect((await t.acquire('e', now)).granted).toBe(true);
    expect(await t.activeSlots(now)).toHaveLength(4);
  });

  it('takes back a slot its session never released once it expires', async () => {
    const t = team();
    const now = Date.now();
    for (const s of ['a', 'b', 'c', 'd']) await t.acquire(s, now);
    expect((await t.acquire('late', now + 1_000)).granted).toBe(false);
    expect((await t.acquire('late', now + SLOT_TTL_MS + 1)).granted).toBe(true);
  });

  it('gives back at once the slots an earlier instance of the team object granted (a restart or a deploy)', async () => {
    const teamId = crypto.getRandomValues(new Uint32Array(1))[0]!;
    const now = Date.now();
    for (const s of ['a', 'b', 'c', 'd']) expect((await teamStub(env, teamId).acquire(s, now)).granted).toBe(true);
    expect((await teamStub(env, teamId).acquire('e', now)).granted).toBe(false);
    // The object restarts: the turns that held those slots ran against the instance that is gone.
    await runInDurableObject(teamStub(env, teamId), (_i, state) => state.abort('restarted by the test')).catch(
      () => undefined,
    );
    const after = teamStub(env, teamId);
    expect(await after.activeSlots(now)).toEqual([]);
    expect((await after.acquire('e', now)).granted).toBe(true);
    // The shared back-off is the provider's word, not a slot: it outlives the restart.
    await after.reportFailure({ kind: 'rate_limit', code: '429', detail: null, until: now + 60_000 }, now);
    await runInDurableObject(after, (_i, state) => state.abort('restarted again')).catch(() => undefined);
    expect((await teamStub(env, teamId).backoffUntil()).until).toBe(now + 60_000);
  });

  it('refuses every session during a shared back-off, which only ever grows', async () => {
    const t = team();
    const now = Date.now();
    await t.reportFailure({ kind: 'rate_limit', code: '429 rate_limit_error', detail: null, until: now + 60_000 }, now);
    await t.reportFailure({ kind: 'overloaded', code: '529 overloaded_error', detail: null, until: now + 5_000 }, now);
    expect(await t.backoffUntil()).toEqual({ until: now + 60_000, kind: 'overloaded' });
    expect(await t.acquire('a', now)).toEqual({ granted: false, retryAt: now + 60_000, reason: 'backoff' });
    expect((await t.health(now)).state).toBe('backing_off');
    await t.clearBackoff();
    expect(await t.acquire('a', now)).toEqual({ granted: true, retryAt: null, reason: null });
    // Once the back-off has passed the observer is well again without anyone saying so.
    expect((await t.health(now + 60_001)).state).toBe('ok');
  });

  it('holds a refused key as failing and lets one session through as the probe, at most 4 minutes after the last', async () => {
    const t = team();
    const t0 = Date.now();
    const refused = {
      kind: 'auth',
      code: '401 authentication_error',
      detail: 'anthropic 401 authentication_error: invalid x-api-key',
      until: t0 + 30 * 60_000,
    } as const;
    const first = await t.reportFailure(refused, t0);
    expect(first.until).toBe(t0 + PROBE_FIRST_MS);
    expect(await t.health(t0 + 1)).toMatchObject({
      state: 'failing',
      kind: 'auth',
      code: '401 authentication_error',
      since: t0,
      retry_at: t0 + PROBE_FIRST_MS,
    });
    // Before the probe is due everyone waits; then the first to ask is the probe and the others wait for it.
    expect(await t.acquire('a', t0 + 1)).toMatchObject({
      granted: false,
      reason: 'backoff',
      retryAt: t0 + PROBE_FIRST_MS,
    });
    let now = t0 + PROBE_FIRST_MS;
    for (let i = 0; i < 12; i++) {
      const probe = await t.acquire('a', now);
      expect(probe).toMatchObject({ granted: true, probe: true });
      const other = await t.acquire('b', now);
      expect(other.granted).toBe(false);
      expect(other.retryAt! - now).toBeLessThanOrEqual(PROBE_MAX_MS);
      await t.release('a');
      const next = await t.reportFailure(refused, now);
      expect(next.until - now).toBeLessThanOrEqual(PROBE_MAX_MS);
      now = next.until;
    }
    expect(PROBE_MAX_MS).toBeLessThan(5 * 60_000);
    expect((await t.health(now)).state).toBe('failing');
    // The key works again: the probe's call went through.
    expect(await t.acquire('a', now)).toMatchObject({ granted: true, probe: true });
    expect((await t.acquire('b', now, { pending: 3, oldestAt: t0, deadLetters: 0 })).granted).toBe(false);
    expect(await t.reportRecovered(now)).toEqual(['b']);
    expect(await t.health(now)).toMatchObject({ state: 'ok', code: null, since: null, last_ok_at: now });
    expect(await t.acquire('b', now)).toEqual({ granted: true, retryAt: null, reason: null });
    // Telling it twice wakes nobody twice.
    expect(await t.reportRecovered(now)).toEqual([]);
  });

  it('sums what sessions report into the team backlog, and says memory is behind once events waited 10 minutes', async () => {
    const t = team();
    const now = Date.now();
    await t.acquire('a', now, { pending: 4, oldestAt: now - 11 * 60_000, deadLetters: 1 });
    await t.acquire('b', now, { pending: 2, oldestAt: now - 60_000, deadLetters: 0 });
    await t.release('c', { pending: 0, oldestAt: null, deadLetters: 2 }, now);
    const h = await t.health(now);
    expect(h.backlog).toEqual({ sessions: 3, pending: 6, oldestAt: now - 11 * 60_000, deadLetters: 3 });
    expect(h.state).toBe('ok');
    expect(h.notice).toMatch(/^Memory is behind: 6 events have waited 11 min to be observed; nothing is lost\./);
    // A session that caught up says so with its release; one that stopped reporting is dropped after a while.
    await t.release('a', { pending: 0, oldestAt: null, deadLetters: 1 }, now);
    expect((await t.health(now)).notice).toBeNull();
    expect((await t.health(now + 31 * 60_000)).backlog).toMatchObject({ pending: 0, deadLetters: 3 });
  });

  it('carries a back-off stored by the previous version into the health record', async () => {
    const t = team();
    const until = Date.now() + 3_600_000;
    await t.ping();
    await runInDurableObject(t, (_i, state) => {
      const sql = state.storage.sql;
      // Back to version 1: what steps 3, 4 and 5 made goes (the write gate's tables are step 4's, its row epoch 5's).
      sql.exec(
        'DROP TABLE observer_health; DROP TABLE backlog; DROP TABLE write_gate; DROP TABLE writers; DROP TABLE placement; DROP TABLE row_epoch; UPDATE schema_version SET version = 1',
      );
      sql.exec("INSERT INTO backoff (id, until, kind) VALUES (1, ?, 'spend_cap')", until);
      migrateDoSqlite(sql, TEAM_SCHEMA);
    });
    expect(await t.backoffUntil()).toEqual({ until, kind: 'spend_cap' });
    expect((await t.health()).state).toBe('failing');
  });

  it('reads the cap from OBSERVER_CONCURRENCY, defaults to 4 when unset, and names a value that is nonsense', () => {
    expect(parseConfig({ OBSERVER_CONCURRENCY: '2' }).observer.concurrency).toBe(2);
    expect(parseConfig({}).observer.concurrency).toBe(4);
    expect(parseConfig({ OBSERVER_CONCURRENCY: '' }).observer.concurrency).toBe(4);
    expect(() => parseConfig({ OBSERVER_CONCURRENCY: 'zero' })).toThrow(/OBSERVER_CONCURRENCY/);
    expect(() => parseConfig({ OBSERVER_CONCURRENCY: '0' })).toThrow(/OBSERVER_CONCURRENCY/);
  });
});
