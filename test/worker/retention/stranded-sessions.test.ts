// An ended session's Durable Object empties its storage from its own alarm; an alarm that keeps failing is retried a
// few times and then dropped by Cloudflare, and nothing else would wake the object: its prompts would stay for good.
// The daily `session-retire` job finds such sessions through D1 (`sessions.retire_after`) and has each object empty
// itself. Checked by reading the object's own storage. The sweep here asks only sessions dated at 1 ms (the test
// dates its own so): other files' sessions in the shared database are never asked.
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { startJob } from '../../../src/jobs/start';
import { sessionRetireJob } from '../../../src/retention/session-retire';
import { fresh, newIdentity } from '../support/http';
import { runJob } from '../support/jobs';
import { idsOf } from '../support/seed';
import { objectHolding, secretWord } from '../support/storage-scan';
import { base, initEvent, script, send, sessionStub, settled, toolEvent, waitFor } from '../pipeline/support';

/** SESSION_RETENTION_SECONDS in the tests (vitest.config.ts). */
const RETENTION_MS = 600_000;

const retireAfter = async (sid: string) =>
  (await env.DB.prepare('SELECT retire_after AS t FROM sessions WHERE session_key = ?')
    .bind(sid)
    .first<{ t: number | null }>())!.t;

/** A session that ended, fully observed, whose prompt holds `word`; its object's alarm is gone (its retries ran out). */
async function strandedSession(word: string, endedAgoMs: number) {
  const id = await newIdentity();
  const { teamId } = await idsOf(id);
  const sid = fresh('s');
  const scenario = fresh('stranded');
  await script(scenario, []);
  await send(id.token, 'init', initEvent(sid, `Tidy the notes about ${word}`));
  await send(id.token, 'observations', toolEvent(sid, `SCENARIO:${scenario} cat NOTES.md`));
  await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored >= 1);
  const before = Date.now();
  await send(id.token, 'end', { ...base(sid), event_id: fresh('ev'), reason: 'exit' });
  // D1 says when the object should empty itself: the end's arrival plus the retention time.
  expect(await retireAfter(sid)).toBeGreaterThanOrEqual(before + RETENTION_MS);
  await runInDurableObject(sessionStub(teamId, sid), async (_i, state) => {
    state.storage.sql.exec(
      "UPDATE meta SET v = CAST(CAST(v AS INTEGER) - ? AS TEXT) WHERE k = 'ended_received_at'",
      endedAgoMs,
    );
    await state.storage.deleteAlarm();
  });
  // Dated far back, so that the sweep below (before = 1) asks this file's sessions only.
  await env.DB.prepare('UPDATE sessions SET retire_after = 1 WHERE session_key = ?').bind(sid).run();
  return { teamId, sid };
}

const sweep = async () => {
  const job = await startJob(env, sessionRetireJob, null, { shard: 'DB', before: 1 });
  return runJob(null, job.id);
};

describe('the sweep of ended sessions whose object still holds their text', () => {
  it('has an object whose alarm gave up empty itself: its prompt is gone from the object’s storage', async () => {
    const word = secretWord();
    const { teamId, sid } = await strandedSession(word, RETENTION_MS + 1_000);
    // Stranded: no alarm, and the prompt's text is still in the object (nothing else would ever wake it).
    expect(await runInDurableObject(sessionStub(teamId, sid), (_i, state) => state.storage.getAlarm())).toBeNull();
    expect(await objectHolding(teamId, sid, word)).toContain('prompts.text');

    const done = await sweep();
    expect(done.status).toBe('done');
    expect(done.result).toEqual({ asked: 1, emptied: 1, holding: 0, unreachable: 0 });
    expect(await objectHolding(teamId, sid, word)).toEqual([]);
    expect(await retireAfter(sid)).toBeNull();
    // Asked again (an emptied object whose D1 mark was lost): it holds nothing, and says so.
    await env.DB.prepare('UPDATE sessions SET retire_after = 1 WHERE session_key = ?').bind(sid).run();
    expect((await sweep()).result).toEqual({ asked: 1, emptied: 1, holding: 0, unreachable: 0 });
  });

  it('leaves an object whose retention time has not passed, with its alarm set again and the next look when it is due', async () => {
    const word = secretWord();
    const { teamId, sid } = await strandedSession(word, 0);
    const done = await sweep();
    expect(done.result).toEqual({ asked: 1, emptied: 0, holding: 1, unreachable: 0 });
    expect(await objectHolding(teamId, sid, word)).toContain('prompts.text');
    const { alarm, endedAt } = await runInDurableObject(sessionStub(teamId, sid), async (_i, state) => ({
      alarm: await state.storage.getAlarm(),
      endedAt: Number(
        state.storage.sql.exec<{ v: string }>("SELECT v FROM meta WHERE k = 'ended_received_at'").one().v,
      ),
    }));
    expect(alarm).toBe(endedAt + RETENTION_MS);
    expect(await retireAfter(sid)).toBe(endedAt + RETENTION_MS);
    // Its own alarm does the rest once due.
    await runInDurableObject(sessionStub(teamId, sid), (_i, state) => {
      state.storage.sql.exec(
        "UPDATE meta SET v = CAST(CAST(v AS INTEGER) - ? AS TEXT) WHERE k = 'ended_received_at'",
        RETENTION_MS + 1_000,
      );
    });
    await runDurableObjectAlarm(sessionStub(teamId, sid));
    expect(await objectHolding(teamId, sid, word)).toEqual([]);
    expect(await retireAfter(sid)).toBeNull();
  });
});
