// The observer's health as a state machine (src/slots/observer-health.ts): failing kinds probe at most 4
// minutes apart, back-offs only extend, a 429 after a refused key ends the failing episode, and the notice
// users read says what happened, what fixes it, and that nothing is lost.
import { describe, expect, it } from 'vitest';
import {
  BEHIND_MS,
  gate,
  HEALTHY,
  memoryNotice,
  onFailure,
  onRecovered,
  PROBE_FIRST_MS,
  PROBE_MAX_MS,
  probeDelay,
  stateOf,
  type HealthRecord,
} from '../../../src/slots/observer-health';

const T0 = Date.UTC(2026, 10, 30, 9, 12);
const refused = {
  kind: 'auth',
  code: '401 authentication_error',
  detail: 'invalid x-api-key',
  until: T0 + 30 * 60_000,
} as const;
const noBacklog = { sessions: 0, pending: 0, oldestAt: null, deadLetters: 0 };

describe('observer health', () => {
  it('probes a failing observer 30 s after the first refusal, doubling to at most 4 minutes, for ever', () => {
    expect([1, 2, 3, 4, 5, 50].map(probeDelay)).toEqual([30_000, 60_000, 120_000, 240_000, 240_000, 240_000]);
    expect(PROBE_FIRST_MS).toBe(probeDelay(1));
    let h: HealthRecord = HEALTHY;
    let now = T0;
    for (let i = 0; i < 20; i++) {
      h = onFailure(h, refused, now);
      expect(h.until - now).toBeLessThanOrEqual(PROBE_MAX_MS);
      now = h.until;
    }
    expect(h).toMatchObject({ kind: 'auth', since: T0, failures: 20 });
    expect(stateOf(h, now + 10 * PROBE_MAX_MS)).toBe('failing');
  });

  it('lets one session through as the probe once it is due and keeps the others waiting for its answer', () => {
    const h = onFailure(HEALTHY, refused, T0);
    expect(gate(h, T0 + 1)).toEqual({ wait: true, retryAt: T0 + PROBE_FIRST_MS });
    const g = gate(h, T0 + PROBE_FIRST_MS);
    expect(g).toMatchObject({ wait: false, probe: true });
    if (g.wait) throw new Error('unreachable');
    expect(gate(g.next, T0 + PROBE_FIRST_MS)).toEqual({ wait: true, retryAt: T0 + PROBE_FIRST_MS + probeDelay(2) });
    expect(onRecovered(T0 + PROBE_FIRST_MS)).toEqual({ ...HEALTHY, lastOkAt: T0 + PROBE_FIRST_MS });
  });

  it('extends a back-off but never shortens it, and lets everyone through once it has passed', () => {
    const long = onFailure(HEALTHY, { kind: 'rate_limit', code: '429', detail: null, until: T0 + 60_000 }, T0);
    const both = onFailure(long, { kind: 'overloaded', code: '529', detail: null, until: T0 + 5_000 }, T0 + 1);
    expect(both.until).toBe(T0 + 60_000);
    expect(stateOf(both, T0 + 59_999)).toBe('backing_off');
    expect(gate(both, T0 + 60_000)).toEqual({ wait: false, probe: false, next: both });
    expect(stateOf(both, T0 + 60_000)).toBe('ok');
  });

  it('ends the failing episode when the provider answers a probe with a rate limit: it took the key', () => {
    const failing = onFailure(HEALTHY, refused, T0);
    const limited = onFailure(
      failing,
      { kind: 'rate_limit', code: '429 rate_limit_error', detail: null, until: T0 + 45_000 },
      T0 + 40_000,
    );
    expect(stateOf(limited, T0 + 40_001)).toBe('backing_off');
    expect(limited).toMatchObject({ kind: 'rate_limit', until: T0 + 45_000, since: T0 + 40_000 });
  });

  it('tells the user that memory is paused, why, what fixes it, and that nothing is lost', () => {
    const h = onFailure(HEALTHY, refused, T0);
    const notice = memoryNotice(
      {
        state: 'failing',
        kind: h.kind,
        code: h.code,
        since: h.since,
        retry_at: h.until,
        backlog: { ...noBacklog, pending: 7 },
      },
      T0 + 1,
    );
    expect(notice).toBe(
      "Memory is paused since 09:12 UTC: the observer's API key was refused (401 authentication_error); an admin must fix the key " +
        '(wrangler secret put ANTHROPIC_API_KEY, or the key of the configured provider), then run `cairn admin observer retry`. ' +
        'cairn tries again every few minutes and resumes by itself once it works. 7 events are waiting and nothing is lost.',
    );
    expect(
      memoryNotice(
        {
          state: 'backing_off',
          kind: 'rate_limit',
          code: '429 rate_limit_error',
          since: T0,
          retry_at: T0 + 120_000,
          backlog: noBacklog,
        },
        T0,
      ),
    ).toBe(
      "Memory is delayed: the observer's provider asked cairn to slow down (429 rate_limit_error); observing resumes by itself at about 09:14 UTC. New events are kept until then.",
    );
  });

  it('says memory is behind only once events have waited over 10 minutes, and nothing when all is well', () => {
    const at = (age: number) => ({
      state: 'ok' as const,
      kind: null,
      code: null,
      since: null,
      retry_at: null,
      backlog: { sessions: 1, pending: 4, oldestAt: T0 - age, deadLetters: 0 },
    });
    expect(memoryNotice(at(BEHIND_MS), T0)).toBeNull();
    expect(memoryNotice(at(BEHIND_MS + 5 * 60_000), T0)).toBe(
      'Memory is behind: 4 events have waited 15 min to be observed; nothing is lost. An admin can see why with `cairn admin health`.',
    );
  });
});
