// A session (or its whole project) forgotten while the agent is still working: what it sends next is new memory,
// stored under new rows, never an error. The ingest path keeps per-isolate memos of session and project row ids;
// a forget moves the team's row epoch (its TeamDO), which keys those memos, so the deleted rows' ids are not used
// again (before: the next prompt answered 500 and the session's turns failed on the deleted session row until the
// memo expired, ten minutes later).
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, fresh, newIdentity, type TestIdentity } from '../support/http';
import { runJob } from '../support/jobs';
import { idsOf } from '../support/seed';
import { initEvent, script, send, settled, toolEvent, waitFor } from '../pipeline/support';

/** A session with one stored observation titled `title`, in `project`. */
async function working(who: TestIdentity, project: string, sid: string, title: string) {
  const scenario = fresh('sc');
  await script(scenario, [
    { text: `<observation><type>discovery</type><title>${title}</title><narrative>n</narrative></observation>` },
  ]);
  const init = await send(who.token, 'init', { ...initEvent(sid, `look into ${title}`), project });
  expect(init.status, JSON.stringify(init.body)).toBe(202);
  const tool = await send(who.token, 'observations', { ...toolEvent(sid, `SCENARIO:${scenario} ls`), project });
  expect(tool.status, JSON.stringify(tool.body)).toBe(202);
  await waitFor(who.token, sid, (s) => settled(s) && s.observations_stored >= 1);
}

const titlesOf = async (teamId: number, sid: string) =>
  (
    await env.DB.prepare(
      'SELECT o.title FROM observations o JOIN sessions s ON s.id = o.session_id WHERE o.team_id = ? AND s.session_key = ?',
    )
      .bind(teamId, sid)
      .all<{ title: string }>()
  ).results.map((r) => r.title);

describe('a forget while the agent works', { timeout: 60_000 }, () => {
  it('stores what a forgotten session sends next under a new session row', async () => {
    const who = await newIdentity();
    const { teamId } = await idsOf(who);
    const sid = fresh('s');
    const project = `github.com/acme/${fresh('p')}`;
    await working(who, project, sid, 'First finding');
    const forgot = await call('/api/forget', { token: who.token, json: { kind: 'session', session_id: sid } });
    expect(forgot.status).toBe(200);

    await working(who, project, sid, 'Second finding');
    expect(await titlesOf(teamId, sid)).toEqual(['Second finding']);
  });

  it('stores what a session of a forgotten project sends next under a new project', async () => {
    const who = await newIdentity({ role: 'owner' });
    const { teamId } = await idsOf(who);
    const sid = fresh('s');
    const project = `github.com/acme/${fresh('p')}`;
    await working(who, project, sid, 'Old finding');
    const ask = await call('/api/forget', { token: who.token, json: { kind: 'project', project, confirm: 2 } });
    expect(ask.status, await ask.clone().text()).toBe(202);
    const { job } = (await ask.json()) as { job: { id: string } };
    expect((await runJob(teamId, job.id)).status).toBe('done');

    await working(who, project, sid, 'New finding');
    expect(await titlesOf(teamId, sid)).toEqual(['New finding']);
  });
});
