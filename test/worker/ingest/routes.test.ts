// Ingest API at the HTTP edge: validation, limits, dedupe, gate, privacy, session rows, status scoping.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/lib/crypto';
import { call, fresh, newIdentity, forgetTokenMemo } from '../support/http';
import { idsOf } from '../support/seed';
import { base, holdLease, initEvent, send, sessionStub, toolEvent } from '../pipeline/support';

const errorCode = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

describe('ingest routes', { timeout: 20_000 }, () => {
  it('numbers prompts per session and stores their text', async () => {
    const id = await newIdentity();
    const sid = fresh('s');
    const first = await send(id.token, 'init', initEvent(sid, 'Fix the login bug'));
    const second = await send(id.token, 'init', initEvent(sid, 'Now add a test'));
    expect(first).toEqual({ status: 202, body: { accepted: true, duplicate: false, prompt_number: 1 } });
    expect(second.body.prompt_number).toBe(2);
    const rows = await env.DB.prepare(
      'SELECT p.prompt_number, p.text, s.prompt_count FROM prompts p JOIN sessions s ON s.id = p.session_id WHERE s.session_key = ? ORDER BY p.prompt_number',
    )
      .bind(sid)
      .all<{ prompt_number: number; text: string; prompt_count: number }>();
    expect(rows.results).toEqual([
      { prompt_number: 1, text: 'Fix the login bug', prompt_count: 2 },
      { prompt_number: 2, text: 'Now add a test', prompt_count: 2 },
    ]);
  });

  it('acknowledges a repeated event id without taking it twice', async () => {
    const id = await newIdentity();
    const sid = fresh('s');
    const init = initEvent(sid, 'Refactor the parser');
    const a = await send(id.token, 'init', init);
    const b = await send(id.token, 'init', init);
    expect(b.body).toEqual({ accepted: true, duplicate: true, prompt_number: a.body.prompt_number });
    const obs = toolEvent(sid, 'npm test');
    expect((await send(id.token, 'observations', obs)).body).toEqual({ accepted: true, duplicate: false });
    expect((await send(id.token, 'observations', obs)).body).toEqual({ accepted: true, duplicate: true });
    const count = await env.DB.prepare(
      'SELECT COUNT(*) AS n FROM prompts p JOIN sessions s ON s.id = p.session_id WHERE s.session_key = ?',
    )
      .bind(sid)
      .first<{ n: number }>();
    expect(count?.n).toBe(1);
  });

  it('creates the session row with project, author, device and platform, and closes it on end', async () => {
    const id = await newIdentity();
    const ids = await idsOf(id);
    const sid = fresh('s');
    await send(id.token, 'init', { ...initEvent(sid, 'hello'), platform: 'cursor' });
    const ended = await send(id.token, 'end', {
      ...base(sid),
      event_id: fresh('ev'),
      reason: 'exit',
      occurred_at: 1_800_000_000_000,
    });
    expect(ended.status).toBe(202);
    const row = await env.DB.prepare(
      `SELECT s.user_id, s.device_id, s.platform, s.prompt_count, s.ended_at, p.key FROM sessions s JOIN projects p ON p.id = s.project_id
        WHERE s.team_id = ? AND s.session_key = ?`,
    )
      .bind(ids.teamId, sid)
      .first();
    expect(row).toEqual({
      user_id: ids.userId,
      device_id: ids.deviceId,
      platform: 'cursor',
      prompt_count: 1,
      ended_at: 1_800_000_000_000,
      key: 'github.com/acme/widgets',
    });
  });

  it('accepts occurred_at as an ISO string or a millisecond epoch and refuses anything else', async () => {
    const id = await newIdentity();
    const sid = fresh('s');
    expect(
      (await send(id.token, 'observations', { ...toolEvent(sid, 'ls'), occurred_at: '2026-11-30T10:00:00Z' })).status,
    ).toBe(202);
    expect(
      (await send(id.token, 'observations', { ...toolEvent(sid, 'ls'), occurred_at: 1_790_000_000_000 })).status,
    ).toBe(202);
    const bad = await send(id.token, 'observations', { ...toolEvent(sid, 'ls'), occurred_at: 'yesterday' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: 'invalid_body' } });
    expect(String((bad.body.error as { message: string }).message)).toContain('occurred_at');
  });

  it('accepts the agent’s prompt_id and the client’s client_seq on every kind, and refuses malformed ones', async () => {
    const id = await newIdentity();
    const sid = fresh('s');
    const tags = { prompt_id: fresh('prompt'), client_seq: 41 };
    expect((await send(id.token, 'init', { ...initEvent(sid, 'Fix the login bug'), ...tags })).status).toBe(202);
    expect((await send(id.token, 'observations', { ...toolEvent(sid, 'ls'), ...tags, client_seq: 42 })).status).toBe(
      202,
    );
    expect(
      (
        await send(id.token, 'summarize', {
          ...base(sid),
          event_id: fresh('ev'),
          last_assistant_message: 'done',
          ...tags,
          client_seq: 43,
        })
      ).status,
    ).toBe(202);
    expect(
      (await send(id.token, 'end', { ...base(sid), event_id: fresh('ev'), reason: 'exit', ...tags, client_seq: 44 }))
        .status,
    ).toBe(202);
    for (const bad of [
      { client_seq: -1 },
      { client_seq: 1.5 },
      { client_seq: '7' },
      { prompt_id: '' },
      { prompt_id: 'x'.repeat(201) },
      { prompt_id: 12 },
    ]) {
      const res = await send(id.token, 'observations', { ...toolEvent(sid, 'ls'), ...bad });
      expect(res).toMatchObject({ status: 400, body: { error: { code: 'invalid_body' } } });
      expect(String((res.body.error as { message: string }).message)).toContain(Object.keys(bad)[0]);
    }
  });

  it('accepts a tool response given as an object, a string or a list, and refuses a number', async () => {
    const id = await newIdentity();
    const sid = fresh('s');
    for (const tool_response of [{ ok: true }, 'plain text', ['a', 'b']]) {
      expect((await send(id.token, 'observations', { ...toolEvent(sid, 'ls'), tool_response })).status).toBe(202);
    }
    const bad = await send(id.token, 'observations', { ...toolEvent(sid, 'ls'), tool_response: 42 });
    expect(bad).toMatchObject({ status: 400, body: { error: { code: 'invalid_body' } } });
  });

  it('refuses malformed JSON, missing fields and wrong types with stable codes', async () => {
    const id = await newIdentity();
    const sid = fresh('s');
    const malformed = await call('/api/sessions/observations', {
      token: id.token,
      method: 'POST',
      body: '{"event_id": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect(await errorCode(malformed)).toBe('malformed_json');
    const { event_id: _drop, ...noId } = toolEvent(sid, 'ls');
    const missing = await send(id.token, 'observations', noId);
    expect(missing).toMatchObject({ status: 400, body: { error: { code: 'invalid_body' } } });
    expect(String((missing.body.error as { message: string }).message)).toContain('event_id');
    const wrongType = await send(id.token, 'init', { ...initEvent(sid, 'x'), private: 'yes' });
    expect(wrongType).toMatchObject({ status: 400, body: { error: { code: 'invalid_body' } } });
    const noTool = await send(id.token, 'observations', { ...toolEvent(sid, 'ls'), tool_name: '' });
    expect(noTool.status).toBe(400);
    const array = await call('/api/sessions/init', { token: id.token, json: [1, 2, 3] });
    expect(array.status).toBe(400);
  });

  it('answers 413 to a body over 1 MB and a 5 MB body alike, and the session keeps working', async () => {
    const id = await newIdentity();
    const sid = fresh('s');
    for (const size of [1_100_000, 5_000_000]) {
      const res = await call('/api/sessions/observations', {
        token: id.token,
        json: { ...toolEvent(sid, 'cat big'), tool_response: 'x'.repeat(size) },
      });
      expect(res.status).toBe(413);
      expect(await errorCode(res)).toBe('payload_too_large');
    }
    expect((await send(id.token, 'observations', toolEvent(sid, 'ls'))).status).toBe(202);
  });

  it('refuses a missing or unknown token and a token without the ingest scope', async () => {
    const sid = fresh('s');
    const none = await call('/api/sessions/init', { json: initEvent(sid, 'x') });
    expect(none.status).toBe(401);
    const wrong = await call('/api/sessions/init', { token: 'cairn_nope', json: initEvent(sid, 'x') });
    expect(wrong.status).toBe(401);
    expect(await errorCode(wrong)).toBe('invalid_token');
    const id = await newIdentity();
    await env.DB.prepare("UPDATE tokens SET scopes = 'read' WHERE hash = ?")
      .bind(await sha256Hex(id.token))
      .run();
    forgetTokenMemo();
    const readOnly = await call('/api/sessions/init', { token: id.token, json: initEvent(sid, 'x') });
    expect(readOnly.status).toBe(403);
    expect(await errorCode(readOnly)).toBe('insufficient_scope');
  });

  it('skips framework-chatter tools and excluded projects with a reason', async () => {
    const id = await newIdentity();
    const ids = await idsOf(id);
    const sid = fresh('s');
    const todo = await send(id.token, 'observations', { ...toolEvent(sid, 'x'), tool_name: 'TodoWrite' });
    expect(todo).toEqual({ status: 202, body: { accepted: false, duplicate: false, skipped: 'tool_excluded' } });
    await env.DB.prepare('UPDATE teams SET settings = ? WHERE id = ?')
      .bind(JSON.stringify({ excluded_projects: ['**/secret-*'] }), ids.teamId)
      .run();
    forgetTokenMemo();
    const excluded = await send(id.token, 'observations', { ...toolEvent(sid, 'ls'), cwd: '/home/dev/secret-plans' });
    expect(excluded.body).toMatchObject({ accepted: false, skipped: 'project_excluded' });
  });

  it('skips a prompt that is only a task notification', async () => {
    const id = await newIdentity();
    const sid = fresh('s');
    const res = await send(
      id.token,
      'init',
      initEvent(sid, '<task-notification><task-id>1</task-id></task-notification>'),
    );
    expect(res.body).toMatchObject({ accepted: false, skipped: 'internal_protocol' });
  });

  it('stores no prompt for a private turn and drops what happens during it', async () => {
    const id = await newIdentity();
    const sid = fresh('s');
    const flagged = await send(id.token, 'init', initEvent(sid, '', { private: true }));
    expect(flagged.body).toMatchObject({ accepted: true, prompt_number: 1 });
    expect((await send(id.token, 'observations', toolEvent(sid, 'cat ~/.ssh/id_rsa'))).body).toEqual({
      accepted: false,
      duplicate: false,
      skipped: 'private',
    });
    expect(
      (await send(id.token, 'summarize', { ...base(sid), event_id: fresh('ev'), last_assistant_message: 'done' })).body,
    ).toMatchObject({ skipped: 'private' });
    // A prompt that is private once its tags are stripped counts as private too.
    const tagged = await send(id.token, 'init', initEvent(sid, '<private>my salary is 100k</private>'));
    expect(tagged.body.prompt_number).toBe(2);
    expect((await send(id.token, 'observations', toolEvent(sid, 'ls'))).body).toMatchObject({ skipped: 'private' });
    const open = await send(id.token, 'init', initEvent(sid, 'Back to work <private>psst</private>'));
    expect(open.body.prompt_number).toBe(3);
    expect((await send(id.token, 'observations', toolEvent(sid, 'ls'))).body).toEqual({
      accepted: true,
      duplicate: false,
    });
    const prompts = await env.DB.prepare(
      'SELECT prompt_number, text FROM prompts p JOIN sessions s ON s.id = p.session_id WHERE s.session_key = ?',
    )
      .bind(sid)
      .all();
    expect(prompts.results).toEqual([{ prompt_number: 3, text: 'Back to work' }]);
  });

  it("does not let a teammate file events under someone else's session", async () => {
    const alice = await newIdentity();
    const bob = await newIdentity({ team: alice.team });
    const sid = fresh('s');
    await send(alice.token, 'init', initEvent(sid, 'mine'));
    const res = await send(bob.token, 'observations', toolEvent(sid, 'ls'));
    expect(res).toMatchObject({ status: 409, body: { error: { code: 'session_conflict' } } });
  });

  it('replays a spooled batch in order with a result per event', async () => {
    const id = await newIdentity();
    const sid = fresh('s');
    const init = { kind: 'init', ...initEvent(sid, 'from the spool') };
    const obs = { kind: 'observation', ...toolEvent(sid, 'ls') };
    const res = await call('/api/events/batch', {
      token: id.token,
      json: {
        events: [init, obs, { kind: 'observation', event_id: 'broken-1' }, { kind: 'teleport', event_id: 'x' }, obs],
      },
    });
    expect(res.status).toBe(200);
    const { results } = (await res.json()) as { results: Record<string, unknown>[] };
    expect(results[0]).toEqual({ event_id: init.event_id, accepted: true, duplicate: false, prompt_number: 1 });
    expect(results[1]).toEqual({ event_id: obs.event_id, accepted: true, duplicate: false });
    expect(results[2]).toMatchObject({ event_id: 'broken-1', error: { code: 'invalid_body' } });
    expect(results[3]).toMatchObject({ event_id: 'x', error: { code: 'invalid_body' } });
    expect(results[4]).toEqual({ event_id: obs.event_id, accepted: true, duplicate: true });
  });

  it('refuses an empty batch and one of more than 200 events', async () => {
    const id = await newIdentity();
    expect((await call('/api/events/batch', { token: id.token, json: { events: [] } })).status).toBe(400);
    const many = Array.from({ length: 201 }, () => ({ kind: 'end', ...base(fresh('s')), event_id: fresh('ev') }));
    const res = await call('/api/events/batch', { token: id.token, json: { events: many } });
    expect(res.status).toBe(400);
    expect(await errorCode(res)).toBe('invalid_body');
  });

  it("shows a session's status to its team and answers 404 alike for unknown and foreign sessions", async () => {
    const id = await newIdentity();
    const other = await newIdentity();
    const sid = fresh('s');
    await send(id.token, 'init', initEvent(sid, 'hello'));
    const mine = await call(`/api/sessions/${sid}/status`, { token: id.token });
    expect(mine.status).toBe(200);
    expect(await mine.json()).toMatchObject({
      session_id: sid,
      pending: expect.any(Number),
      in_flight: expect.any(Number),
      dead_letters: [],
    });
    const foreign = await call(`/api/sessions/${sid}/status`, { token: other.token });
    const unknown = await call(`/api/sessions/${fresh('nope')}/status`, { token: other.token });
    expect(foreign.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(await foreign.json()).toEqual(await unknown.json());
  });

  it('hides the status of a session in a private project from teammates', async () => {
    const alice = await newIdentity();
    const bob = await newIdentity({ team: alice.team });
    const sid = fresh('s');
    await send(alice.token, 'init', { ...initEvent(sid, 'local work'), project: 'local/scratch' });
    expect((await call(`/api/sessions/${sid}/status`, { token: alice.token })).status).toBe(200);
    expect((await call(`/api/sessions/${sid}/status`, { token: bob.token })).status).toBe(404);
  });

  it('cuts each field to 16,000 characters, head and tail kept, before the event is buffered', async () => {
    const id = await newIdentity();
    const { teamId } = await idsOf(id);
    const sid = fresh('s');
    const stub = sessionStub(teamId, sid);
    // Hold the turn lease so the buffered event stays where the test can read it.
    await holdLease(teamId, sid);
    const response = `START${'r'.repeat(50_000)}END`;
    const input = { command: `echo ${'i'.repeat(30_000)}` };
    await send(id.token, 'observations', { ...toolEvent(sid, 'x'), tool_input: input, tool_response: response });
    const payload = await runInDurableObject(
      stub,
      (_i, state) =>
        JSON.parse(state.storage.sql.exec<{ payload: string }>('SELECT payload FROM pending').one().payload) as {
          toolInput: string;
          toolResponse: string;
        },
    );
    for (const field of [payload.toolInput, payload.toolResponse]) {
      expect(field.length).toBeLessThanOrEqual(16_000);
      expect(field).toMatch(/<elided chars="\d+"/);
    }
    expect(payload.toolResponse.startsWith('START')).toBe(true);
    expect(payload.toolResponse.endsWith('END')).toBe(true);
  });

  it('answers bad input at every ingest route with a 4xx and a stable code, never a 500', async () => {
    const id = await newIdentity();
    const routes = [
      '/api/sessions/init',
      '/api/sessions/observations',
      '/api/sessions/summarize',
      '/api/sessions/end',
      '/api/events/batch',
    ];
    for (const route of routes) {
      const cases: [RequestInit & { json?: unknown }, number, string][] = [
        [{ method: 'POST', body: 'not json', headers: { 'content-type': 'application/json' } }, 400, 'malformed_json'],
        [{ json: {} }, 400, 'invalid_body'],
        [{ json: { event_id: 7, session_id: [], project: null, occurred_at: {} } }, 400, 'invalid_body'],
        [
          {
            method: 'POST',
            body: JSON.stringify({ pad: 'x'.repeat(5_000_000) }),
            headers: { 'content-type': 'application/json' },
          },
          413,
          'payload_too_large',
        ],
      ];
      for (const [init, code, error] of cases) {
        const res = await call(route, { token: id.token, ...init });
        expect([route, res.status, await errorCode(res)]).toEqual([route, code, error]);
      }
      const noToken = await call(route, { json: {} });
      expect(noToken.status).toBe(401);
    }
  });
});
