// Branch and HEAD commit sent with hook events are checked at the edge and stored with the session and each observation.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { fresh, newIdentity } from '../support/http';
import { initEvent, script, send, settled, toolEvent, waitFor } from '../pipeline/support';

const C1 = 'a'.repeat(40);
const C2 = 'b'.repeat(40);

describe('branch and commit on stored rows', () => {
  it('stores the first event’s branch on the session and the turn’s latest commit on its observations', {
    timeout: 30_000,
  }, async () => {
    const alice = await newIdentity();
    const sid = fresh('s');
    const scenario = fresh('git');
    await script(scenario, []);
    expect(
      (
        await send(
          alice.token,
          'init',
          initEvent(sid, 'Fix the parser', { git_branch: 'feature/parser', git_commit: C1 }),
        )
      ).status,
    ).toBe(202);
    expect(
      (
        await send(
          alice.token,
          'observations',
          toolEvent(sid, `SCENARIO:${scenario} one`, { git_branch: 'feature/parser', git_commit: C1 }),
        )
      ).status,
    ).toBe(202);
    expect(
      (
        await send(
          alice.token,
          'observations',
          toolEvent(sid, `SCENARIO:${scenario} two`, { git_branch: 'feature/parser', git_commit: C2 }),
        )
      ).status,
    ).toBe(202);
    await waitFor(alice.token, sid, (s) => settled(s) && s.observations_stored >= 1);
    const session = await env.DB.prepare('SELECT git_branch, git_commit FROM sessions WHERE session_key = ?')
      .bind(sid)
      .first();
    expect(session).toEqual({ git_branch: 'feature/parser', git_commit: C1 });
    const rows = await env.DB.prepare(
      'SELECT o.git_branch, o.git_commit FROM observations o JOIN sessions s ON s.id = o.session_id WHERE s.session_key = ?',
    )
      .bind(sid)
      .all();
    // Both events in one turn give C2; split over two turns, the second one's rows have C2 all the same.
    expect(rows.results.length).toBeGreaterThan(0);
    for (const r of rows.results) expect(r.git_branch).toBe('feature/parser');
    expect(rows.results.map((r) => r.git_commit)).toContain(C2);
    expect(rows.results.every((r) => r.git_commit === C1 || r.git_commit === C2)).toBe(true);
  });

  it('leaves both NULL for a client that sends neither', { timeout: 30_000 }, async () => {
    const alice = await newIdentity();
    const sid = fresh('s');
    const scenario = fresh('git');
    await script(scenario, []);
    await send(alice.token, 'init', initEvent(sid, 'Old client'));
    await send(alice.token, 'observations', toolEvent(sid, `SCENARIO:${scenario} old`));
    await waitFor(alice.token, sid, (s) => settled(s) && s.observations_stored >= 1);
    const rows = await env.DB.prepare(
      'SELECT s.git_branch AS sb, s.git_commit AS sc, o.git_branch AS ob, o.git_commit AS oc FROM observations o JOIN sessions s ON s.id = o.session_id WHERE s.session_key = ?',
    )
      .bind(sid)
      .all();
    expect(rows.results.length).toBeGreaterThan(0);
    for (const r of rows.results) expect(r).toEqual({ sb: null, sc: null, ob: null, oc: null });
  });

  it.each([
    ['a branch with a space', { git_branch: 'my branch' }],
    ['a branch with a control character', { git_branch: 'main\u0007' }],
    ['a branch with ..', { git_branch: 'a..b' }],
    ['an overlong branch', { git_branch: `b${'x'.repeat(200)}` }],
    ['a short commit', { git_commit: 'abc1234' }],
    ['an upper-case commit', { git_commit: 'A'.repeat(40) }],
    ['a commit that is not a string', { git_commit: 42 }],
  ])('refuses %s with 400 invalid_body and stores nothing', async (_what, extra) => {
    const alice = await newIdentity();
    const sid = fresh('s');
    const res = await send(alice.token, 'init', initEvent(sid, 'Bad git fields', extra));
    expect(res.status).toBe(400);
    expect((res.body.error as { code: string }).code).toBe('invalid_body');
    expect(await env.DB.prepare('SELECT COUNT(*) AS n FROM sessions WHERE session_key = ?').bind(sid).first('n')).toBe(
      0,
    );
  });
});
