// SessionDO internals seen from inside the object: what is buffered, how repeats and old ids are handled.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { GATHER_MS, readyDue } from '../../../src/session/alarms';
import { EventBuffer, WAITING } from '../../../src/session/buffer';
import { TURN_MAX_CHARS, TURN_MAX_EVENTS } from '../../../src/session/policy';
import { sessionStub } from '../../../src/session/session-do';
import type { BufferedEvent, EnqueueInput, EventSnapshot } from '../../../src/session/types';
import { fresh } from '../support/http';
import { insideSession } from '../pipeline/support';

const snapshot = (sessionKey: string): EventSnapshot => ({
  teamId: 999_999,
  sessionKey,
  sessionDbId: 1,
  projectId: 1,
  projectKey: 'p',
  userId: 1,
  deviceId: null,
});

const obs = (sessionKey: string, over: Partial<EnqueueInput> = {}): EnqueueInput =>
  ({
    kind: 'observation',
    eventId: fresh('ev'),
    occurredAt: Date.now(),
    snapshot: snapshot(sessionKey),
    modeId: 'code',
    toolName: 'Bash',
    toolInput: '{"command":"ls"}',
    toolResponse: 'ok',
    cwd: '/w',
    toolUseId: null,
    agentId: null,
    agentType: null,
    ...over,
  }) as EnqueueInput;

/** A stub whose alarms never observe anything: the test holds the turn lease for the whole test. */
async function heldSession() {
  const key = fresh('s');
  const stub = sessionStub(env, 999999, key);
  await insideSession(stub, (instance, state) => {
    state.storage.sql.exec(
      "INSERT INTO lease (id, claim_id, expires_at, instance_id) VALUES (1, 'test-hold', ?, ?)",
      Date.now() + 3_600_000,
      instance.instanceId,
    );
  });
  return { key, stub };
}

describe('SessionDO buffer', () => {
  it('pulls in an alarm left far ahead by an earlier turn when a new event arrives with no turn running', async () => {
    const key = fresh('s');
    const stub = sessionStub(env, 999_999, key);
    const far = Date.now() + 10 * 60_000;
    const backoffUntil = Date.now() + 60_000;
    // What a turn leaves behind when an event arrived during it: an alarm at its lease expiry, lease gone.
    // (A back-off keeps the pulled-in alarm from firing during the test, so it can be read.)
    await runInDurableObject(stub, async (_i, state) => {
      state.storage.sql.exec("INSERT INTO meta (k, v) VALUES ('backoff_until', ?)", JSON.stringify(backoffUntil));
      await state.storage.setAlarm(far);
    });
    await stub.enqueue(obs(key));
    expect(await runInDurableObject(stub, (_i, state) => state.storage.getAlarm())).toBe(backoffUntil);
  });

  it('stamps each event with the prompt current when it arrived, and its own snapshot', async () => {
    const { key, stub } = await heldSession();
    await stub.enqueue(obs(key));
    await stub.enqueue({
      kind: 'init',
      eventId: fresh('ev'),
      occurredAt: Date.now(),
      snapshot: snapshot(key),
      modeId: 'code',
      prompt: 'next',
      private: false,
    });
    await stub.enqueue(obs(key, { snapshot: { ...snapshot(key), projectId: 7 } }));
    const rows = await runInDurableObject(stub, (_i, state) =>
      state.storage.sql
        .exec<{ prompt_number: number; snapshot: string }>('SELECT prompt_number, snapshot FROM pending ORDER BY seq')
        .toArray(),
    );
    expect(rows.map((r) => [r.prompt_number, (JSON.parse(r.snapshot) as EventSnapshot).projectId])).toEqual([
      [0, 1],
      [1, 7],
    ]);
  });

  it('answers a repeated event id like the first time and buffers it once', async () => {
    const { key, stub } = await heldSession();
    const e = obs(key);
    expect(await stub.enqueue(e)).toEqual({ accepted: true, duplicate: false, promptNumber: 0 });
    expect(await stub.enqueue(e)).toEqual({ accepted: true, duplicate: true, promptNumber: 0 });
    expect((await stub.status()).pending).toBe(1);
  });

  it('keeps recognising an event id after it was observed and confirmed', async () => {
    const { key, stub } = await heldSession();
    const e = obs(key);
    await stub.enqueue(e);
    await runInDurableObject(stub, (_i, state) => state.storage.sql.exec('DELETE FROM pending'));
    expect((await stub.enqueue(e)).duplicate).toBe(true);
  });

  it("ignores a subagent's stop instead of summarising the prompt", async () => {
    const { key, stub } = await heldSession();
    const res = await stub.enqueue({
      kind: 'summarize',
      eventId: fresh('ev'),
      occurredAt: Date.now(),
      snapshot: snapshot(key),
      modeId: 'code',
      lastAssistantMessage: 'sub done',
      agentId: 'agent-1',
    });
    expect(res).toMatchObject({ accepted: false, skipped: 'subagent_summary' });
    expect((await stub.status()).pending).toBe(0);
  });

  it('reports in-flight events separately from waiting ones while a turn holds them', async () => {
    const { key, stub } = await heldSession();
    await stub.enqueue(obs(key));
    await stub.enqueue(obs(key));
    await runInDurableObject(stub, (_i, state) =>
      state.storage.sql.exec("UPDATE pending SET claim_id = 'test-hold' WHERE seq = (SELECT MIN(seq) FROM pending)"),
    );
    expect(await stub.status()).toMatchObject({ pending: 1, in_flight: 1 });
  });

  it('schedules an alarm for new work but not before a back-off ends', async () => {
    const key = fresh('s');
    const stub = sessionStub(env, 999999, key);
    const until = Date.now() + 600_000;
    await runInDurableObject(stub, (_i, state) => {
      state.storage.sql.exec("INSERT INTO meta (k, v) VALUES ('backoff_until', ?)", String(until));
    });
    await stub.enqueue(obs(key));
    expect(await runInDurableObject(stub, (_i, state) => state.storage.getAlarm())).toBe(until);
  });
});

describe('SessionDO gathering events into fuller turns', () => {
  /** Runs `check` on a fresh session's buffer inside its object (no alarm set, no turn running). */
  const inBuffer = <T>(check: (b: EventBuffer) => T) =>
    runInDurableObject(sessionStub(env, 999_999, fresh('s')), (_i, state) =>
      check(new EventBuffer(state.storage.sql, 'test')),
    );

  it('lets a lone event wait a short while for company, counted from when it arrived', async () => {
    const key = fresh('s');
    // Enqueued and read inside the object: only storage calls are awaited, so the alarm cannot fire in between.
    const { alarm, arrived } = await insideSession(sessionStub(env, 999_999, key), async (instance, state) => {
      await instance.enqueue(obs(key));
      return {
        alarm: await state.storage.getAlarm(),
        arrived: state.storage.sql.exec<{ t: number }>('SELECT received_at AS t FROM pending').one().t,
      };
    });
    expect(alarm).toBe(arrived + GATHER_MS);
  });

  it('observes at once when the ready events fill a turn by count or by size, and not at all when none is ready', async () => {
    const due = await inBuffer((b) => {
      const arrived = 1_000_000;
      const at = (now: number) => readyDue(b, now);
      const none = at(arrived);
      for (let i = 0; i < TURN_MAX_EVENTS - 1; i++) b.insert(obs('k') as BufferedEvent, 0, arrived + i);
      const almost = at(arrived + 10);
      b.insert(obs('k') as BufferedEvent, 0, arrived + 20);
      const full = at(arrived + 30);
      return { none, almost, full };
    });
    expect(due).toEqual({ none: null, almost: 1_000_000 + GATHER_MS, full: 1_000_030 });
    const big = await inBuffer((b) => {
      b.insert(obs('k', { toolResponse: 'x'.repeat(TURN_MAX_CHARS) }) as BufferedEvent, 0, 5_000);
      return readyDue(b, 5_001);
    });
    expect(big).toBe(5_001);
  });

  it('does not wait on events that are held for their prompt or claimed by a turn', async () => {
    const due = await inBuffer((b) => {
      b.insert(obs('k') as BufferedEvent, WAITING, 1_000);
      const waiting = readyDue(b, 2_000);
      b.insert(obs('k') as BufferedEvent, 0, 1_500);
      b.claim(
        'turn-1',
        b.candidates().map((r) => r.seq),
        'key-1',
      );
      return { waiting, claimed: readyDue(b, 2_000) };
    });
    expect(due).toEqual({ waiting: null, claimed: null });
  });
});
