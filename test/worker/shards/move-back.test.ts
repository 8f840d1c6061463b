// A team moved to another database and back lives on its first database again under new row ids (the move deletes
// its rows from the old database and copies them back). This isolate's ingest memos of project and session ids are
// keyed by the team's placement (database and the time the move put the team there), so an event sent after the
// round trip is stored under the new ids instead of failing with 500 on the old ones (they were found by the
// transfer fuzz's slow run: "ingest during a move", the team's third move between DB and DB_1).
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { startJob } from '../../../src/jobs/start';
import { moveJob } from '../../../src/transfer/move-job';
import { fresh, newIdentity } from '../support/http';
import { finishJob } from '../support/jobs';
import { idsOf } from '../support/seed';
import { initEvent, send, settled, toolEvent, waitFor } from '../pipeline/support';

async function move(teamId: number, to: 'DB' | 'DB_1') {
  const job = await startJob(env, moveJob, teamId, { to, force: false, settleMs: 0 });
  expect((await finishJob(teamId, job.id)).status).toBe('done');
}

const sessionRows = (d: D1Database, teamId: number, key: string) =>
  d
    .prepare('SELECT id FROM sessions WHERE team_id = ? AND session_key = ?')
    .bind(teamId, key)
    .all<{ id: number }>()
    .then((r) => r.results.map((row) => row.id));

describe('ingest after a move away and back', { timeout: 120_000 }, () => {
  it('stores the next event of a session under the ids the round trip gave it', async () => {
    const owner = await newIdentity({ role: 'owner' });
    const { teamId } = await idsOf(owner);
    const sid = fresh('round-trip');
    expect((await send(owner.token, 'init', initEvent(sid, 'Make the cache keys stable'))).status).toBe(202);
    expect((await send(owner.token, 'observations', toolEvent(sid, 'npm test -- cache'))).status).toBe(202);
    await waitFor(owner.token, sid, (s) => settled(s) && s.observations_stored >= 1);
    const [before] = await sessionRows(env.DB, teamId, sid);

    await move(teamId, 'DB_1');
    await move(teamId, 'DB');
    const [after] = await sessionRows(env.DB, teamId, sid);
    expect(after).toBeDefined();
    expect(after).not.toBe(before);

    const next = await send(owner.token, 'observations', toolEvent(sid, 'npm run build -- cache'));
    expect(next.status, JSON.stringify(next.body)).toBe(202);
    await waitFor(owner.token, sid, (s) => settled(s) && s.observations_stored >= 2);
    expect(await sessionRows(env.DB, teamId, sid)).toEqual([after]);
    expect(await sessionRows(env.DB_1, teamId, sid)).toEqual([]);
  });
});
