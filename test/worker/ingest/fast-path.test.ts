// The ingest fast path: token verdicts memoised per isolate for a bounded window, the ingest limit counted by
// the SessionDO in the same round trip as the event, batch replay as one SessionDO call per session, and
// Server-Timing saying where a request's time went.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { TOKEN_CACHE_MS } from '../../../src/auth/token-cache';
import { lookupToken } from '../../../src/auth/tokens';
import { call, fresh, forgetTokenMemo } from '../support/http';
import { initEvent, send, toolEvent } from '../pipeline/support';
import { addTeammate, errorCode, json, newOwner } from '../teams/support';

describe('token verdict memo', () => {
  it('keeps answering for a token revoked elsewhere until the window ends, then refuses it', async () => {
    const owner = await newOwner();
    const bob = await addTeammate(owner, fresh('bob'));
    forgetTokenMemo();
    const t0 = 1_900_000_000_000;
    expect((await lookupToken(env.DB, bob.token, t0)).check.ok).toBe(true);
    // Another isolate revokes the token: this isolate's memo does not know yet.
    await env.DB.prepare('UPDATE tokens SET revoked_at = ? WHERE id = ?').bind(Date.now(), bob.token_id).run();
    expect((await lookupToken(env.DB, bob.token, t0 + TOKEN_CACHE_MS - 1)).check.ok).toBe(true);
    const after = (await lookupToken(env.DB, bob.token, t0 + TOKEN_CACHE_MS)).check;
    expect(after).toMatchObject({ ok: false, reason: 'revoked', tokenId: bob.token_id });
  });

  it('refuses a memoised token as soon as its own expiry passes, without waiting for the window', async () => {
    const owner = await newOwner();
    const bob = await addTeammate(owner, fresh('bob'), { expires_in_days: 1 });
    forgetTokenMemo();
    const expiresAt = bob.expires_at!;
    expect((await lookupToken(env.DB, bob.token, expiresAt - 5)).check.ok).toBe(true);
    expect((await lookupToken(env.DB, bob.token, expiresAt)).check).toMatchObject({ ok: false, reason: 'expired' });
  });

  it('does not keep unknown or revoked verdicts: a token that starts to exist is seen at once', async () => {
    const owner = await newOwner();
    const bob = await addTeammate(owner, fresh('bob'));
    forgetTokenMemo();
    await env.DB.prepare('UPDATE tokens SET revoked_at = 1 WHERE id = ?').bind(bob.token_id).run();
    expect((await lookupToken(env.DB, bob.token, Date.now())).check.ok).toBe(false);
    await env.DB.prepare('UPDATE tokens SET revoked_at = NULL WHERE id = ?').bind(bob.token_id).run();
    expect((await lookupToken(env.DB, bob.token, Date.now())).check.ok).toBe(true);
  });

  it('applies a revocation made through this isolate to the very next request', async () => {
    const owner = await newOwner();
    const bob = await addTeammate(owner, fresh('bob'));
    expect((await call('/api/projects', { token: bob.token })).status).toBe(200);
    await json(await call(`/api/admin/tokens/${bob.token_id}/revoke`, { token: owner.token, method: 'POST' }));
    const next = await call('/api/projects', { token: bob.token });
    expect(next.status).toBe(401);
    expect(await errorCode(next)).toBe('token_revoked');
  });

  it('applies a team setting changed through this isolate to the very next event', async () => {
    const owner = await newOwner();
    const sid = fresh('s');
    expect((await send(owner.token, 'observations', toolEvent(sid, 'ls'))).body).toMatchObject({ accepted: true });
    await json(
      await call('/api/admin/settings', { token: owner.token, method: 'PATCH', json: { skipped_tools: ['Bash'] } }),
    );
    expect((await send(owner.token, 'observations', toolEvent(sid, 'ls -la'))).body).toMatchObject({
      accepted: false,
      skipped: 'tool_excluded',
    });
  });
});

describe('ingest limit counted by the session object', () => {
  it('refuses the call past the limit with 429 and retry-after, per session, leaving reads alone', async () => {
    const owner = await newOwner();
    await json(
      await call('/api/admin/settings', {
        token: owner.token,
        method: 'PATCH',
        json: { rate_limit_ingest_per_min: 3 },
      }),
    );
    const sid = fresh('s');
    const answers = [];
    for (let i = 0; i < 4; i++)
      answers.push(await call('/api/sessions/observations', { token: owner.token, json: toolEvent(sid, `step ${i}`) }));
    expect(answers.slice(0, 3).map((r) => r.status)).toEqual([202, 202, 202]);
    expect(answers[2]!.headers.get('x-ratelimit-remaining')).toBe('0');
    const refused = answers[3]!;
    expect(refused.status).toBe(429);
    expect(await errorCode(refused)).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    // Another session has its own count; reads are counted apart.
    expect((await send(owner.token, 'observations', toolEvent(fresh('s'), 'ls'))).status).toBe(202);
    expect((await call('/api/projects', { token: owner.token })).status).toBe(200);
  });

  it('counts each event of a burst to one session once, however the isolate gathers them into object calls', async () => {
    const owner = await newOwner();
    await json(
      await call('/api/admin/settings', {
        token: owner.token,
        method: 'PATCH',
        json: { rate_limit_ingest_per_min: 5 },
      }),
    );
    const sid = fresh('s');
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        call('/api/sessions/observations', { token: owner.token, json: toolEvent(sid, `burst ${i}`) }),
      ),
    );
    const codes = answers.map((r) => r.status).sort();
    expect(codes).toEqual([...Array(5).fill(202), ...Array(7).fill(429)]);
  });

  it('takes every event of a burst to one session under its own id: sent again, each is a repeat', async () => {
    const owner = await newOwner();
    const sid = fresh('s');
    const events = Array.from({ length: 12 }, (_, i) => toolEvent(sid, `burst ${i}`));
    const first = await Promise.all(events.map((e) => send(owner.token, 'observations', e)));
    expect(first.map((a) => [a.status, a.body.accepted, a.body.duplicate])).toEqual(
      events.map(() => [202, true, false]),
    );
    const again = await Promise.all(events.map((e) => send(owner.token, 'observations', e)));
    expect(again.map((a) => [a.status, a.body.duplicate])).toEqual(events.map(() => [202, true]));
  });

  it('does not enqueue a refused event: sent again later it is new, not a repeat', async () => {
    const owner = await newOwner();
    await json(
      await call('/api/admin/settings', {
        token: owner.token,
        method: 'PATCH',
        json: { rate_limit_ingest_per_min: 1 },
      }),
    );
    const sid = fresh('s');
    expect((await send(owner.token, 'init', initEvent(sid, 'Fix the flaky test'))).status).toBe(202);
    const second = initEvent(sid, 'Now the docs');
    expect((await send(owner.token, 'init', second)).status).toBe(429);
    const prompts = await env.DB.prepare(
      'SELECT p.text FROM prompts p JOIN sessions s ON s.id = p.session_id WHERE s.session_key = ?',
    )
      .bind(sid)
      .all();
    expect(prompts.results).toEqual([{ text: 'Fix the flaky test' }]);
  });
});

describe('batch replay', () => {
  const batch = (token: string, events: Record<string, unknown>[]) =>
    call('/api/events/batch', { token, json: { events } });
  type Results = {
    results: { event_id: string | null; accepted?: boolean; prompt_number?: number; error?: { code: string } }[];
  };

  it('counts each event against its own session: of a batch, a session takes what its window has left, in order', async () => {
    const owner = await newOwner();
    await json(
      await call('/api/admin/settings', {
        token: owner.token,
        method: 'PATCH',
        json: { rate_limit_ingest_per_min: 2 },
      }),
    );
    const [a, b] = [fresh('a'), fresh('b')];
    const sent = [
      { kind: 'init', ...initEvent(a, 'first in a') },
      { kind: 'init', ...initEvent(b, 'first in b') },
      { kind: 'observation', ...toolEvent(a, 'ls') },
      { kind: 'init', ...initEvent(a, 'second in a') },
      { kind: 'observation', ...toolEvent(b, 'pwd') },
    ];
    const first = await batch(owner.token, sent);
    const out = await json<Results>(first);
    // a's first two events are let in, its third refused; b's two fit its own window.
    expect(out.results.map((r) => r.error?.code ?? 'ok')).toEqual(['ok', 'ok', 'ok', 'rate_limited', 'ok']);
    expect(out.results.map((r) => r.prompt_number)).toEqual([1, 1, undefined, undefined, undefined]);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('0');
    // Both windows are spent: a batch none of whose events can be let in is refused whole.
    const again = await batch(owner.token, [sent[3]!]);
    expect(again.status).toBe(429);
    expect(await errorCode(again)).toBe('rate_limited');
  });

  it('answers each event in the order sent, bad ones beside good ones of several sessions', async () => {
    const owner = await newOwner();
    const [a, b] = [fresh('a'), fresh('b')];
    const sent = [
      { kind: 'observation', ...toolEvent(a, 'ls') },
      { kind: 'nonsense', event_id: 'bad-kind' },
      { kind: 'observation', ...toolEvent(b, 'ls'), tool_name: '' },
      { kind: 'observation', ...toolEvent(b, 'pwd') },
    ];
    const out = await json<Results>(await batch(owner.token, sent));
    expect(out.results.map((r) => r.event_id)).toEqual(sent.map((e) => e.event_id));
    expect(out.results.map((r) => r.error?.code ?? 'ok')).toEqual(['ok', 'invalid_body', 'invalid_body', 'ok']);
  });
});

describe('Server-Timing', () => {
  it('names the token check and the session object on an ingest answer', async () => {
    const owner = await newOwner();
    const res = await call('/api/sessions/observations', { token: owner.token, json: toolEvent(fresh('s'), 'ls') });
    expect(res.status).toBe(202);
    const timing = res.headers.get('server-timing') ?? '';
    expect(timing).toMatch(/\bauth;dur=/);
    expect(timing).toMatch(/\bsession;dur=/);
    expect(timing).toMatch(/\btotal;dur=/);
  });

  it('names the token check and the rate limiter on an MCP answer', async () => {
    const owner = await newOwner();
    const res = await call('/mcp', {
      token: owner.token,
      headers: { accept: 'application/json, text/event-stream' },
      json: {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'timing', version: '1' } },
      },
    });
    expect(res.status).toBe(200);
    await res.body?.cancel();
    const timing = res.headers.get('server-timing') ?? '';
    expect(timing).toMatch(/\bauth;dur=/);
    expect(timing).toMatch(/\blimit;dur=/);
    expect(timing).toMatch(/\btotal;dur=/);
  });
});
