// GET /install/cairn.mjs serves the client built with this Worker (a static asset), with its version, without a token.
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http';

let CLIENT_SOURCE = '';
let CLIENT_VERSION = '';
let CLIENT_SHA256 = '';
beforeAll(async () => {
  const manifest = (await (await env.ASSETS.fetch('https://assets.invalid/manifest.json')).json()) as {
    client: { version: string; sha256: string };
  };
  CLIENT_VERSION = manifest.client.version;
  CLIENT_SHA256 = manifest.client.sha256;
  CLIENT_SOURCE = await (await env.ASSETS.fetch('https://assets.invalid/install/cairn.mjs')).text();
});

describe('GET /install/cairn.mjs', () => {
  it('serves the bundled client as JavaScript with its version and checksum', async () => {
    const res = await call('/install/cairn.mjs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/javascript');
    expect(res.headers.get('x-cairn-client-version')).toBe(CLIENT_VERSION);
    const body = await res.text();
    expect(body).toBe(CLIENT_SOURCE);
    expect(body.startsWith('#!/usr/bin/env node')).toBe(true);
    const digest = Array.from(
      new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(body))),
      (b) => b.toString(16).padStart(2, '0'),
    ).join('');
    expect(digest).toBe(CLIENT_SHA256);
  });

  it('is a real build, not a placeholder', () => {
    expect(CLIENT_SOURCE.length).toBeGreaterThan(20_000);
    expect(CLIENT_SOURCE).toContain('hook');
    expect(CLIENT_VERSION).toMatch(/^\d+\.\d+\.\d+\+[0-9a-f]{10}$/);
  });

  it('answers 304 when the client already has this build', async () => {
    const res = await call('/install/cairn.mjs', { headers: { 'if-none-match': `"${CLIENT_SHA256}"` } });
    expect(res.status).toBe(304);
  });

  it('answers HEAD with the version header, for `cairn status` update checks', async () => {
    const res = await call('/install/cairn.mjs', { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-cairn-client-version')).toBe(CLIENT_VERSION);
  });
});
