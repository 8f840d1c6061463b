// TeamDO on its own: the per-team observer slots and the shared back-off.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { SLOT_TTL_MS, teamStub } from '../../../src/slots/team-do';
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
    await runInDurableObject(teamStub(env, teamId), (_i, state) => state.abort('restarted by the test')).catch(() => undefined);
    const after = teamStub(env, teamId);
    expect(await after.activeSlots(now)).toEqual([]);
    expect((await after.acquire('e', now)).granted).toBe(true);
    // The shared back-off is the provider's word, not a slot: it outlives the restart.
    await after.reportBackoff('rate_limit', now + 60_000);
    await runInDurableObject(after, (_i, state) => state.abort('restarted again')).catch(() => undefined);
    expect((await teamStub(env, teamId).backoffUntil()).until).toBe(now + 60_000);
  });

  it('refuses every session during a shared back-off, which only ever grows', async () => {
    const t = team();
    const now = Date.now();
    await t.reportBackoff('spend_cap', now + 3_600_000);
    await t.reportBackoff('rate_limit', now + 5_000);
    expect(await t.backoffUntil()).toEqual({ until: now + 3_600_000, kind: 'spend_cap' });
    expect(await t.acquire('a', now)).toEqual({ granted: false, retryAt: now + 3_600_000, reason: 'backoff' });
    await t.clearBackoff();
    expect((await t.acquire('a', now)).granted).toBe(true);
  });

  it('reads the cap from OBSERVER_CONCURRENCY, defaults to 4 when unset, and names a value that is nonsense', () => {
    expect(parseConfig({ OBSERVER_CONCURRENCY: '2' }).observer.concurrency).toBe(2);
    expect(parseConfig({}).observer.concurrency).toBe(4);
    expect(parseConfig({ OBSERVER_CONCURRENCY: '' }).observer.concurrency).toBe(4);
    expect(() => parseConfig({ OBSERVER_CONCURRENCY: 'zero' })).toThrow(/OBSERVER_CONCURRENCY/);
    expect(() => parseConfig({ OBSERVER_CONCURRENCY: '0' })).toThrow(/OBSERVER_CONCURRENCY/);
  });
});
