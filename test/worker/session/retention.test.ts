// Retention of a session's Durable Object: once the session ended, was fully observed and
// SESSION_RETENTION_SECONDS (600 in tests) passed, its storage is emptied; dead letters are counted into D1
// first. Time is moved by rewriting the stored end time, and the alarm is fired directly.
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { retentionMs, retentionStep } from '../../../src/session/retention';
import { fresh, newIdentity } from '../support/http';
import { idsOf } from '../support/seed';
import {
  base,
  holdLease,
  initEvent,
  script,
  send,
  sessionStub,
  settled,
  toolEvent,
  waitFor,
} from '../pipeline/support';

const RETENTION_MS = 600_000;

/** Rows left in each table of the object's storage (meta listed by key). */
async function storageRows(teamId: number, sid: string): Promise<Record<string, number | string[]>> {
  return runInDurableObject(sessionStub(teamId, sid), (_i, state) => {
    const sql = state.storage.sql;
    const out: Record<string, number | string[]> = {};
    for (const { name } of sql
      .exec<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
      )
      .toArray()) {
      out[name] =
        name === 'meta'
          ? sql
              .exec<{ k: string }>('SELECT k FROM meta ORDER BY k')
              .toArray()
              .map((r) => r.k)
          : sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM "${name}"`).one().n;
    }
    return out;
  });
}

async function rewindEnd(teamId: number, sid: string, byMs: number): Promise<void> {
  await runInDurableObject(sessionStub(teamId, sid), (_i, state) => {
    state.storage.sql.exec(
      "UPDATE meta SET v = CAST(CAST(v AS INTEGER) - ? AS TEXT) WHERE k = 'ended_received_at'",
      byMs,
    );
  });
}

async function endedSession() {
  const id = await newIdentity();
  const { teamId } = await idsOf(id);
  const sid = fresh('s');
  const scenario = fresh('ret');
  await script(scenario, []);
  await send(id.token, 'init', initEvent(sid, 'Tidy the release notes'));
  await send(id.token, 'observations', toolEvent(sid, `SCENARIO:${scenario} cat NOTES.md`));
  await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored >= 1);
  await send(id.token, 'end', { ...base(sid), event_id: fresh('ev'), reason: 'exit' });
  return { id, teamId, sid };
}

describe('session retention', { timeout: 30_000 }, () => {
  it('reads SESSION_RETENTION_SECONDS, defaulting to one day', () => {
    expect(retentionMs('600')).toBe(600_000);
    expect(retentionMs(undefined)).toBe(86_400_000);
    expect(retentionMs('soon')).toBe(86_400_000);
    expect(retentionStep({ endedAt: 1_000, pending: 0 }, 5_000, 2_000)).toEqual({ kind: 'wait', at: 6_000 });
    expect(retentionStep({ endedAt: 1_000, pending: 1 }, 5_000, 9_000)).toEqual({ kind: 'keep' });
    expect(retentionStep({ endedAt: null, pending: 0 }, 5_000, 9_000)).toEqual({ kind: 'keep' });
  });

  it("empties an ended, fully observed session's storage once the retention time passed, counting its dead letters into D1", async () => {
    const { teamId, sid } = await endedSession();
    const stub = sessionStub(teamId, sid);
    const { endedAt, alarm } = await runInDurableObject(stub, async (_i, state) => ({
      endedAt: Number(
        state.storage.sql.exec<{ v: string }>("SELECT v FROM meta WHERE k = 'ended_received_at'").one().v,
      ),
      alarm: await state.storage.getAlarm(),
    }));
    expect(alarm).toBe(endedAt + RETENTION_MS);
    await runInDurableObject(stub, (_i, state) => {
      state.storage.sql.exec(
        `INSERT INTO dead_letters (event_id, kind, tool_name, payload, snapshot, occurred_at, prompt_number, attempts, last_error, failed_at)
         VALUES ('dl-1', 'observation', 'Bash', '{"toolInput":"secret stuff"}', '{}', 1, 1, 5, 'boom', 1)`,
      );
    });
    // Before the time: the alarm only sets itself again.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await storageRows(teamId, sid)).prompts).toBe(1);

    await rewindEnd(teamId, sid, RETENTION_MS + 1_000);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const left = await storageRows(teamId, sid);
    for (const [table, rows] of Object.entries(left)) {
      if (table === 'meta') expect(rows, table).toEqual(['prompt_base']);
      // The storage schema's version (src/db/do-schema.ts) says nothing about the session.
      else if (table === 'schema_version') expect(rows, table).toBe(1);
      else expect(rows, table).toBe(0);
    }
    expect(await runInDurableObject(stub, (_i, state) => state.storage.getAlarm())).toBeNull();
    const row = await env.DB.prepare('SELECT dead_letters, retire_after FROM sessions WHERE session_key = ?')
      .bind(sid)
      .first<{ dead_letters: number; retire_after: number | null }>();
    expect(row?.dead_letters).toBe(1);
    // Emptied: the daily sweep of stranded objects (retention/session-retire.ts) passes it over.
    expect(row?.retire_after).toBeNull();
  });

  it('keeps a session that has not been fully observed, and numbers the prompts of a resumed session after the old ones', async () => {
    const { id, teamId, sid } = await endedSession();
    const stub = sessionStub(teamId, sid);
    await holdLease(teamId, sid);
    await send(id.token, 'observations', toolEvent(sid, 'late tool call'));
    await rewindEnd(teamId, sid, RETENTION_MS + 1_000);
    await runDurableObjectAlarm(stub);
    expect((await storageRows(teamId, sid)).pending).toBe(1);

    // Observed at last: the next alarm after that empties it.
    await runInDurableObject(stub, (_i, state) => state.storage.sql.exec('DELETE FROM lease'));
    await runDurableObjectAlarm(stub);
    await waitFor(id.token, sid, (s) => settled(s));
    await runDurableObjectAlarm(stub);
    expect((await storageRows(teamId, sid)).pending).toBe(0);
    expect((await storageRows(teamId, sid)).prompts).toBe(0);

    const again = await send(id.token, 'init', initEvent(sid, 'Back to the release notes'));
    expect(again.body.prompt_number).toBe(2);
  });
});
