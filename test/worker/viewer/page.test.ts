// The public page shell and assets: served without a token, with a strict CSP and no inline code.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { SessionView } from '#shared/wire/feed';
import { call, fresh, newIdentity } from '../support/http';
import { idsOf, seedObservation, seedProject, seedSession } from '../support/seed';

describe('viewer page', () => {
  it('serves the shell publicly with a strict content security policy and no inline script', async () => {
    const res = await call('/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\son\w+=/);
    expect(html).not.toMatch(/style=/);
  });

  it('names this build’s versioned script and stylesheet, which are in the static assets, and serves them no other way', async () => {
    const html = await (await call('/')).text();
    const js = /src="(\/viewer\/app\.[0-9a-f]{12}\.js)"/.exec(html)![1]!;
    const css = /href="(\/viewer\/app\.[0-9a-f]{12}\.css)"/.exec(html)![1]!;
    expect(await (await env.ASSETS.fetch(`https://assets.invalid${js}`)).text()).toContain('/api/viewer/me');
    expect((await env.ASSETS.fetch(`https://assets.invalid${css}`)).status).toBe(200);
    // The assets server answers /viewer/* (test/node/viewer/viewer.browser.test.ts checks its headers); the Worker has no such route.
    expect((await call(js)).status).toBe(404);
  });

  it('never puts anything but the asset version into the page', async () => {
    const html = await (await call('/')).text();
    expect(html).not.toMatch(/cairn_[A-Za-z0-9]{10,}/);
    expect(html).not.toMatch(/token=/i);
  });
});

describe('session by key', () => {
  it('finds a session by the key full records carry, and hides other teams\u2019 sessions', async () => {
    const me = await newIdentity();
    const ids = await idsOf(me);
    const projectId = await seedProject(ids, `github.com/acme/${fresh('r')}`);
    const key = fresh('claude-session');
    const sessionId = await seedSession(ids, projectId, key);
    await seedObservation(ids, projectId, sessionId, { title: 'inside' });
    const res = await call(`/api/viewer/sessions?key=${encodeURIComponent(key)}`, { token: me.token });
    expect(res.status).toBe(200);
    expect(((await res.json()) as SessionView).observations.map((o) => o.title)).toEqual(['inside']);
    const stranger = await newIdentity();
    const theirs = await call(`/api/viewer/sessions?key=${encodeURIComponent(key)}`, { token: stranger.token });
    const none = await call(`/api/viewer/sessions?key=${encodeURIComponent(fresh('nope'))}`, { token: stranger.token });
    expect(theirs.status).toBe(404);
    expect(await theirs.json()).toEqual(await none.json());
  });
});
