// A job step's `breathe` (src/jobs/step.ts): the pause it leaves other teams' requests between two units of work.
// Timers are vitest's fake ones and the step's clock is a variable, so nothing here depends on the machine's speed.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CairnEnv } from '../../../src/env';
import { PACE_MAX_MS, stepContext } from '../../../src/jobs/step';

const budget = { statements: 200, subrequests: 40, ms: 5_000, bytes: 16 * 1024 * 1024 };

function contextAt(clock: { now: number }, paceMaxMs?: number) {
  return stepContext({
    env: {} as CairnEnv,
    jobId: 'pace',
    teamId: 1,
    actorUserId: null,
    budget,
    clock: () => clock.now,
    ...(paceMaxMs === undefined ? {} : { paceMaxMs }),
  });
}

/** Whether `p` has settled after the fake timers advance by `ms`. */
async function settledAfter(p: Promise<void>, ms: number): Promise<boolean> {
  let settled = false;
  void p.then(() => (settled = true));
  await vi.advanceTimersByTimeAsync(ms);
  return settled;
}

describe('a job step breathes between its units of work', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('pauses as long as the step worked since its last pause', async () => {
    const clock = { now: 1_000 };
    const ctx = contextAt(clock);
    clock.now += 30;
    const pause = ctx.breathe();
    expect(await settledAfter(pause, 29)).toBe(false);
    expect(await settledAfter(pause, 1)).toBe(true);
  });

  it('never pauses longer than PACE_MAX_MS however long the unit took', async () => {
    const clock = { now: 1_000 };
    const ctx = contextAt(clock);
    clock.now += 10 * PACE_MAX_MS;
    expect(await settledAfter(ctx.breathe(), PACE_MAX_MS)).toBe(true);
  });

  it('counts the work from the end of the last pause, not from the start of the step', async () => {
    const clock = { now: 1_000 };
    const ctx = contextAt(clock);
    clock.now += PACE_MAX_MS;
    const first = ctx.breathe();
    clock.now += PACE_MAX_MS;
    expect(await settledAfter(first, PACE_MAX_MS)).toBe(true);
    clock.now += 5;
    const second = ctx.breathe();
    expect(await settledAfter(second, 4)).toBe(false);
    expect(await settledAfter(second, 1)).toBe(true);
  });

  it('does not pause at all in a step run inside a request', async () => {
    const clock = { now: 1_000 };
    const ctx = contextAt(clock, 0);
    clock.now += 500;
    expect(await settledAfter(ctx.breathe(), 0)).toBe(true);
  });
});
