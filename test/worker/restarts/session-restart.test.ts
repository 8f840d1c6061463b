// A session's Durable Object restarted mid-turn (a deploy, an eviction, a crash): the turn's lease and claims
// belonged to the instance that died, so the next instance gives them back at once and observes the events
// again, each stored once, with no wait for the old lease to run out. The restart is real: the object is
// reset (`ctx.abort`) and the next call starts a new instance on the same storage.
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { RESUME_MS } from '../../../src/session/alarms';
import { MAX_TURN_DEATHS } from '../../../src/session/policy';
import { call, fresh, newIdentity } from '../support/http';
import { idsOf } from '../support/seed';
import {
  arrived,
  countRows,
  initEvent,
  insideSession,
  recorded,
  release,
  script,
  send,
  sessionStub,
  settled,
  toolEvent,
  waitFor,
} from '../pipeline/support';

/** Resets the session's object as a deploy would: the running instance and whatever it awaits are gone. */
async function restart(teamId: number, sessionKey: string): Promise<void> {
  await runInDurableObject(sessionStub(teamId, sessionKey), (_i, state) => state.abort('restarted by the test')).catch(
    () => undefined,
  );
}

/** Starts the pending alarm without waiting for it; a restart makes it fail, which the test expects. */
const fireAlarm = (teamId: number, sessionKey: string) =>
  runDurableObjectAlarm(sessionStub(teamId, sessionKey)).then(
    () => 'done',
    () => 'cut off',
  );

async function inside(teamId: number, sessionKey: string) {
  return insideSession(sessionStub(teamId, sessionKey), async (instance, state) => ({
    status: await instance.status(),
    alarm: await state.storage.getAlarm(),
  }));
}

/** The session's observations D1 holds without a vector yet. */
const unembedded = async (sessionKey: string) =>
  (await env.DB.prepare(
    'SELECT COUNT(*) AS n FROM observations o JOIN sessions s ON s.id = o.session_id WHERE s.session_key = ? AND o.embedded_at IS NULL',
  )
    .bind(sessionKey)
    .first<{ n: number }>())!.n;

/** Waits (a bounded number of short pauses) for work handed to waitUntil to reach D1. */
async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  let v = await read();
  for (let i = 0; i < 300 && !ok(v); i++) {
    await new Promise((r) => setTimeout(r, 20));
    v = await read();
  }
  return v;
}

/**
 * A session whose prompt and `events` tool calls arrive in one request (one SessionDO call), so its first turn
 * holds all of them whenever its alarm fires: sent one request at a time, the pool's own alarm (GATHER_MS after the
 * first event) could start a turn with some of them on a loaded machine, and the rest made a second turn.
 */
async function startSession(events: number) {
  const id = await newIdentity();
  const { teamId } = await idsOf(id);
  const sid = fresh('s');
  const scenario = fresh('restart');
  await script(scenario, [], 0, { hold: true });
  const batch = [
    { kind: 'init', ...initEvent(sid, 'Tidy the importer') },
    ...Array.from({ length: events }, (_, i) => ({
      kind: 'observation',
      ...toolEvent(sid, i === 0 ? `SCENARIO:${scenario} step-${i}` : `step-${i}`),
    })),
  ];
  const res = await call('/api/events/batch', { token: id.token, json: { events: batch } });
  const { results } = (await res.json()) as { results: { accepted?: boolean }[] };
  expect(results.map((r) => r.accepted)).toEqual(batch.map(() => true));
  return { id, teamId, sid, scenario };
}

describe('a session object restarted mid-turn', { timeout: 30_000 }, () => {
  it('gives the dead turn’s claims back at once and keeps an alarm within seconds, then stores every event once', async () => {
    const { id, teamId, sid, scenario } = await startSession(4);
    const turn = fireAlarm(teamId, sid);
    await arrived(scenario, 1);
    // The turn holds all four events (they arrived in one call).
    expect((await inside(teamId, sid)).status.in_flight).toBe(4);

    await restart(teamId, sid);
    // The alarm that ran the turn is cut off with it (or the one that ran it was a due alarm of the pool's own).
    await turn;
    const now = Date.now();
    const after = await inside(teamId, sid);
    // The new instance holds no turn: the events wait again, and an alarm comes within seconds, not at the old lease's end.
    expect(after.status).toMatchObject({ pending: 4, in_flight: 0, turns: 0 });
    expect(after.alarm).not.toBeNull();
    expect(after.alarm!).toBeLessThanOrEqual(now + RESUME_MS);

    // The observer answers now (the held call of the dead instance is let go: nobody waits for it).
    await script(scenario, []);
    await release(scenario);
    const done = await waitFor(id.token, sid, (s) => settled(s) && s.turns >= 1);
    expect(done.dead_letters).toEqual([]);
    expect(await countRows(sid)).toEqual({ total: 4, distinct: 4 });
    expect((await recorded(scenario)).length).toBe(2);
  });

  it('recognises a turn stored just before the restart and confirms it without asking the observer again', async () => {
    const { id, teamId, sid, scenario } = await startSession(3);
    await script(scenario, []);
    let crashes = 0;
    await insideSession(sessionStub(teamId, sid), (instance) => {
      // The turn stops right after its D1 write, as if the process died there; the test then restarts the object.
      instance.testSeams.fault = (point) => (point === 'after-store' && crashes++ === 0 ? 'crash' : undefined);
    });
    await fireAlarm(teamId, sid);
    // (The pool may have fired the gathering alarm itself: the turn is then that alarm's.)
    expect(
      await eventually(
        () => countRows(sid),
        (r) => r.total === 3,
      ),
    ).toEqual({ total: 3, distinct: 3 });
    await restart(teamId, sid);

    const after = await inside(teamId, sid);
    expect(after.status).toMatchObject({ pending: 3, in_flight: 0, turns: 0 });
    expect(after.alarm!).toBeLessThanOrEqual(Date.now() + RESUME_MS);
    await waitFor(id.token, sid, (s) => settled(s) && s.turns >= 1);
    expect(await countRows(sid)).toEqual({ total: 3, distinct: 3 });
    expect((await recorded(scenario)).length).toBe(1);
    // The dead turn never got to its vectors: the replay that recognised it indexes its rows.
    expect(
      await eventually(
        () => unembedded(sid),
        (n) => n === 0,
      ),
    ).toBe(0);
  });

  it('runs again the after-store work (vectors) a restart cut off, so every stored row is embedded', async () => {
    const { id, teamId, sid, scenario } = await startSession(2);
    await script(scenario, []);
    await insideSession(sessionStub(teamId, sid), (instance) => {
      // The work after the store never finishes in this instance: waitUntil cut off, or the instance gone.
      instance.testSeams.afterStore = { run: () => new Promise<void>(() => {}) };
    });
    await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored === 2);
    expect(await unembedded(sid)).toBe(2);
    await restart(teamId, sid);

    // The new instance wants an alarm at once (the pool may already have run it: then none is left).
    const after = await inside(teamId, sid);
    expect(after.alarm === null || after.alarm <= Date.now()).toBe(true);
    await runDurableObjectAlarm(sessionStub(teamId, sid));
    expect(
      await eventually(
        () => unembedded(sid),
        (n) => n === 0,
      ),
    ).toBe(0);
    const left = () =>
      runInDurableObject(
        sessionStub(teamId, sid),
        (_i, state) => state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM after_store').one().n,
      );
    expect(await eventually(left, (n) => n === 0)).toBe(0);
  });

  it('keeps the alarm within seconds while its own turn runs, so a restart at any moment resumes soon', async () => {
    const { id, teamId, sid, scenario } = await startSession(1);
    const turn = fireAlarm(teamId, sid);
    await arrived(scenario, 1);
    // An event arriving during the turn, and an alarm fired during it, both leave the alarm near.
    await send(id.token, 'observations', toolEvent(sid, 'during the turn'));
    expect((await inside(teamId, sid)).alarm!).toBeLessThanOrEqual(Date.now() + RESUME_MS);
    expect(await runDurableObjectAlarm(sessionStub(teamId, sid))).toBe(true);
    const during = await inside(teamId, sid);
    expect(during.status).toMatchObject({ in_flight: 1, pending: 1, turns: 0 });
    expect(during.alarm!).toBeLessThanOrEqual(Date.now() + RESUME_MS);

    await release(scenario);
    expect(await turn).toBe('done');
    await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored === 2);
    expect(await countRows(sid)).toEqual({ total: 2, distinct: 2 });
  });

  it('sets an alarm for waiting events when an instance starts and finds none (one lost with the old instance)', async () => {
    const { teamId, sid, scenario } = await startSession(2);
    await runInDurableObject(sessionStub(teamId, sid), (_i, state) => state.storage.deleteAlarm());
    await restart(teamId, sid);
    const now = Date.now();
    const after = await inside(teamId, sid);
    expect(after.status.pending).toBe(2);
    expect(after.alarm).not.toBeNull();
    expect(after.alarm!).toBeLessThanOrEqual(now + RESUME_MS);
    await release(scenario);
  });
});

describe('a turn that kills its session object every time', { timeout: 30_000 }, () => {
  it('is sent to the observer at most MAX_TURN_DEATHS times, then its events are dead letters with the reason', async () => {
    const { id, teamId, sid, scenario } = await startSession(1);
    // Each telling of the turn reaches the observer (a billed call) and the object dies while it waits, as one
    // past 30 s of CPU or 128 MB would; any alarm may run the turn (the pool fires due alarms by itself).
    for (let death = 1; death <= MAX_TURN_DEATHS; death++) {
      void fireAlarm(teamId, sid);
      await arrived(scenario, death);
      await restart(teamId, sid);
    }
    // From here the observer answers at once: a turn told again would be stored.
    await script(scenario, []);
    await release(scenario);
    const done = await waitFor(id.token, sid, settled);
    expect((await recorded(scenario)).length).toBe(MAX_TURN_DEATHS);
    expect(await countRows(sid)).toEqual({ total: 0, distinct: 0 });
    expect(done.dead_letters).toHaveLength(1);
    for (const d of done.dead_letters) expect(d.last_error).toMatch(/object died during this turn 3 times/);
    // Nothing is left to tell: later alarms send nothing.
    await runDurableObjectAlarm(sessionStub(teamId, sid));
    expect((await recorded(scenario)).length).toBe(MAX_TURN_DEATHS);
  });
});

describe('the lease of a turn', () => {
  it('is held by the instance that took it: a lease another instance wrote is no live turn, and its claims are not in flight', async () => {
    const id = await newIdentity();
    const { teamId } = await idsOf(id);
    const sid = fresh('s');
    const scenario = fresh('restart');
    await script(scenario, []);
    // The tool call names a prompt whose own event has not arrived: it waits for it, so no turn of this instance
    // can claim it before the test plants the dead turn's lease and claim (however late the test gets there).
    await send(id.token, 'observations', toolEvent(sid, `SCENARIO:${scenario} step-0`, { prompt_id: 'p-1' }));
    await runInDurableObject(sessionStub(teamId, sid), (_i, state) => {
      state.storage.sql.exec(
        "INSERT INTO lease (id, claim_id, expires_at, instance_id) VALUES (1, 'dead-turn', ?, 'an-instance-that-died')",
        Date.now() + 3_600_000,
      );
      state.storage.sql.exec("UPDATE pending SET claim_id = 'dead-turn'");
    });
    expect((await inside(teamId, sid)).status).toMatchObject({ pending: 1, in_flight: 0 });
    // The prompt arrives; the next alarm does not wait for that lease: it gives the claim back and observes the event.
    await send(id.token, 'init', initEvent(sid, 'Tidy the importer', { prompt_id: 'p-1' }));
    await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored === 1);
    expect(await countRows(sid)).toEqual({ total: 1, distinct: 1 });
  });
});
