// SessionDO internals seen from inside the object: what is buffered, how repeats and old ids are handled.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { sessionStub } from '../../../src/session/session-do';
import type { EnqueueInput, EventSnapshot } from '../../../src/session/types';
import { fresh } from '../support/http';

const snapshot = (sessionKey: string): EventSnapshot => ({ teamId: 999_999, sessionKey, sessionDbId: 1, projectId: 1, projectKey: 'p', userId: 1, deviceId: null });

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
  await runInDurableObject(stub, (_i, state) => {
    state.storage.sql.exec("INSERT INTO lease (id, claim_id, expires_at) VALUES (1, 'test-hold', ?)", Date.now() + 3_600_000);
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
    await stub.enqueue({ kind: 'init', eventId: fresh('ev'), occurredAt: Date.now(), snapshot: snapshot(key), modeId: 'code', prompt: 'next', private: false });
    await stub.enqueue(obs(key, { snapshot: { ...snapshot(key), projectId: 7 } }));
    const rows = await runInDurableObject(stub, (_i, state) =>
      state.storage.sql.exec<{ prompt_number: number; snapshot: string }>('SELECT prompt_number, snapshot FROM pending ORDER BY seq').toArray(),
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

  it('ignores a subagent\'s stop instead of summarising the prompt', async () => {
    const { key, stub } = await heldSession();
    const res = await stub.enqueue({ kind: 'summarize', eventId: fresh('ev'), occurredAt: Date.now(), snapshot: snapshot(key), modeId: 'code', lastAssistantMessage: 'sub done', agentId: 'agent-1' });
    expect(res).toMatchObject({ accepted: false, skipped: 'subagent_summary' });
    expect((await stub.status()).pending).toBe(0);
  });

  it('reports in-flight events separately from waiting ones while a turn holds them', async () => {
    const { key, stub } = await heldSession();
    await stub.enqueue(obs(key));
    await stub.enqueue(obs(key));
    await runInDurableObject(stub, (_i, state) => state.storage.sql.exec("UPDATE pending SET claim_id = 'test-hold' WHERE seq = (SELECT MIN(seq) FROM pending)"));
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
