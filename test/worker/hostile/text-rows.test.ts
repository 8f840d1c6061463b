// Issue 14, rows 1, 2 and 4 at the HTTP edge: huge memory-tag bodies, hostile team globs and deep JSON are
// answered (2xx or 4xx with a stable code), nothing private is buffered, and another caller is served meanwhile.
import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { call, fresh, newIdentity } from '../support/http';
import { idsOf } from '../support/seed';
import { base, holdLease, initEvent, send, sessionStub, toolEvent } from '../pipeline/support';
import { errorCode, json } from '../teams/support';

const pendingPayloads = (teamId: number, sid: string) =>
  runInDurableObject(sessionStub(teamId, sid), (_i, state) =>
    state.storage.sql
      .exec<{ payload: string }>('SELECT payload FROM pending')
      .toArray()
      .map((r) => r.payload),
  );

describe('hostile text at the ingest edge', { timeout: 30_000 }, () => {
  it('takes a 900 KB <private> tool response and prompt, buffers none of it, and serves another caller meanwhile (row 1)', async () => {
    const id = await newIdentity();
    const other = await newIdentity();
    const { teamId } = await idsOf(id);
    const sid = fresh('s');
    await send(id.token, 'init', initEvent(sid, 'start'));
    await holdLease(teamId, sid);
    const secret = 'SECRET-CANARY-';
    const body = `<private>${secret.repeat(900_000 / secret.length)}</private>`;
    const unclosed = `${'<private>'.repeat(100_000)}${secret}`;
    const [tool, unclosedTool, prompt, health] = await Promise.all([
      send(id.token, 'observations', { ...toolEvent(sid, 'cat notes'), tool_response: `${body} visible tail` }),
      send(id.token, 'observations', { ...toolEvent(sid, 'cat more'), tool_response: unclosed }),
      send(id.token, 'init', initEvent(fresh('s'), body)),
      call('/api/projects', { token: other.token }),
    ]);
    expect(tool.status).toBe(202);
    expect(unclosedTool.status).toBe(202);
    expect(prompt).toMatchObject({ status: 202, body: { accepted: true } });
    expect(health.status).toBe(200);
    const payloads = await pendingPayloads(teamId, sid);
    expect(payloads.join('\n')).not.toContain('SECRET-CANARY');
    expect(payloads.join('\n')).toContain('visible tail');
  });

  it('answers an event with a 4,000-char cwd under the team glob **a**a**a**b without stalling (row 2)', async () => {
    const owner = await newIdentity({ role: 'owner' });
    await json(
      await call('/api/admin/settings', {
        token: owner.token,
        method: 'PATCH',
        json: { excluded_projects: ['**a**a**a**b', `/x/${'*a'.repeat(200)}`] },
      }),
    );
    const sid = fresh('s');
    const cwd = `/${'a'.repeat(3_999)}`;
    const res = await send(owner.token, 'init', { ...initEvent(sid, 'hello'), cwd });
    expect(res.status).toBe(202);
    expect(res.body.skipped).toBeUndefined();
    const excluded = await send(owner.token, 'init', {
      ...initEvent(fresh('s'), 'hello'),
      cwd: `/${'a'.repeat(3_998)}b`,
    });
    expect(excluded.body).toMatchObject({ accepted: false, skipped: 'project_excluded' });
  });

  it('refuses a tool_input nested 50,000 arrays deep with 400 json_too_deep, alone or in a batch, and accepts the good events on their own (row 4)', async () => {
    const id = await newIdentity();
    const sid = fresh('s');
    const deep = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
    const event = JSON.stringify({ ...toolEvent(sid, 'x') }).replace(/}$/, `,"tool_input":${deep}}`);
    const single = await call('/api/sessions/observations', {
      token: id.token,
      method: 'POST',
      body: event,
      headers: { 'content-type': 'application/json' },
    });
    expect(single.status).toBe(400);
    expect(await errorCode(single)).toBe('json_too_deep');
    const good = { kind: 'observation', ...toolEvent(sid, 'ls') };
    const batch = `{"events":[${JSON.stringify(good)},${event.replace(/^{/, '{"kind":"observation",')}]}`;
    const refused = await call('/api/events/batch', {
      token: id.token,
      method: 'POST',
      body: batch,
      headers: { 'content-type': 'application/json' },
    });
    expect(refused.status).toBe(400);
    expect(await errorCode(refused)).toBe('json_too_deep');
    // The client answers a batch refused as a whole by sending its events one at a time: the good one lands.
    const alone = await call('/api/events/batch', { token: id.token, json: { events: [good] } });
    const { results } = await json<{ results: Array<{ accepted?: boolean }> }>(alone);
    expect(results[0]).toMatchObject({ accepted: true });
  });

  it('keeps a JSON string nested past the depth limit as a string instead of re-serialising it', async () => {
    const id = await newIdentity();
    const { teamId } = await idsOf(id);
    const sid = fresh('s');
    await send(id.token, 'init', initEvent(sid, 'go'));
    await holdLease(teamId, sid);
    const nested = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const res = await send(id.token, 'observations', {
      ...base(sid),
      event_id: fresh('ev'),
      tool_name: 'Bash',
      tool_input: nested,
      tool_response: 'ok',
    });
    expect(res.status).toBe(202);
    const [payload] = await pendingPayloads(teamId, sid);
    expect((JSON.parse(payload!) as { toolInput: string }).toolInput.startsWith('[[[[')).toBe(true);
  });
});
