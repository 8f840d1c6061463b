// Pure rules of the observer loop: batch selection, failure plans, observation times.
import { describe, expect, it } from 'vitest';
import { ISOLATE_AFTER, observationTimes, planFailure, selectBatch } from '../../../src/session/policy';
import type { PendingRow } from '../../../src/session/types';
import { PROBE_FIRST_MS } from '../../../src/slots/observer-health';

let seq = 0;
function row(over: Partial<PendingRow> = {}): PendingRow {
  seq++;
  const promptNumber = over.promptNumber ?? 1;
  return {
    seq,
    eventId: `e${seq}`,
    kind: 'observation',
    payload: { toolName: 'Bash', toolInput: 'ls', toolResponse: '', agentId: null, agentType: null },
    chars: 100,
    occurredAt: 1_000 + seq,
    promptNumber,
    snapshot: { teamId: 1, sessionKey: 's', sessionDbId: 1, projectId: 1, projectKey: 'p', userId: 1, deviceId: null },
    groupKey: `p${promptNumber}`,
    attempts: 0,
    deaths: 0,
    lastError: null,
    claimId: null,
    promptId: null,
    clientSeq: null,
    turnKey: null,
    ...over,
  };
}

describe('selectBatch', () => {
  it('takes every waiting event of the same filing key, oldest first', () => {
    const rows = [row(), row(), row()];
    expect(selectBatch(rows).map((r) => r.seq)).toEqual(rows.map((r) => r.seq));
  });

  it('caps a turn by event count and by characters', () => {
    const many = Array.from({ length: 30 }, () => row());
    expect(selectBatch(many)).toHaveLength(20);
    const big = [row({ chars: 30_000 }), row({ chars: 30_000 }), row({ chars: 10 })];
    expect(selectBatch(big).map((r) => r.seq)).toEqual([big[0]!.seq]);
    expect(selectBatch([row({ chars: 90_000 })])).toHaveLength(1);
  });

  it('keeps prompts apart and serves the older prompt first', () => {
    const p2 = row({ promptNumber: 2 });
    const p1 = row({ promptNumber: 1 });
    expect(selectBatch([p2, p1]).map((r) => r.seq)).toEqual([p1.seq]);
  });

  it('sends a summary alone and only after the tool events of its prompt', () => {
    const summary = row({
      kind: 'summarize',
      payload: { lastAssistantMessage: 'done', agentId: null, agentType: null },
    });
    const late = row();
    expect(selectBatch([summary, late]).map((r) => r.seq)).toEqual([late.seq]);
    expect(selectBatch([summary])).toEqual([summary]);
  });

  it('sends an event that failed repeatedly on its own', () => {
    const poison = row({ attempts: ISOLATE_AFTER });
    const fine = row();
    expect(selectBatch([poison, fine])).toEqual([poison]);
    const older = row({ seq: poison.seq - 100 });
    expect(selectBatch([older, poison, fine]).map((r) => r.eventId)).toEqual([older.eventId, fine.eventId]);
  });
});

describe('planFailure', () => {
  it('honours retry-after for a rate limit and shares it with the team without spending retries', () => {
    expect(planFailure('rate_limit', 7_000, 0)).toEqual({ delayMs: 7_000, countsAttempt: false, shared: 'rate_limit' });
  });

  it("leaves a spend cap, a refused key or a configuration error to the team probe, never spending their events' retries", () => {
    // The TeamDO's probe schedule decides when memory resumes (slots/observer-health.ts); this session only waits
    // one probe interval when the TeamDO cannot answer, whatever the streak.
    for (const kind of ['spend_cap', 'auth', 'config'] as const) {
      expect(planFailure(kind, null, 0)).toEqual({ delayMs: PROBE_FIRST_MS, countsAttempt: false, shared: kind });
      expect(planFailure(kind, null, 9)).toEqual({ delayMs: PROBE_FIRST_MS, countsAttempt: false, shared: kind });
    }
    expect(planFailure('bad_request', null, 0)).toMatchObject({ countsAttempt: true, shared: null });
  });

  it('backs off exponentially on server errors, capped, and spends a retry each time', () => {
    const delays = [0, 1, 2, 3, 20].map((n) => planFailure('server', null, n).delayMs);
    expect(delays).toEqual([2_000, 4_000, 8_000, 16_000, 120_000]);
    expect(planFailure('store', null, 0).countsAttempt).toBe(true);
  });
});

describe('observationTimes', () => {
  it('gives the i-th observation the i-th event time and extra ones the last event time', () => {
    expect(observationTimes([10, 20], 3)).toEqual([10, 20, 20]);
    expect(observationTimes([10, 20, 30], 1)).toEqual([10]);
    expect(observationTimes([], 2)).toEqual([]);
  });
});
