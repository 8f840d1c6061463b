// A record's versions in the viewer, in headless Chromium against a real `wrangler dev`: its author edits it from
// the detail pane, reads its history with what each version changed, compares version 1 with now and reverts to
// it; a teammate who is not its author is told they cannot edit it, and nothing changes.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_PATH, chromiumAvailable } from '../../support/chromium';
import { CHROMIUM_FLAGS, loadDevServer, openPage, signIn, type DevServer } from './browser';

const POLL = { timeout: 20_000, interval: 200 };
const ADMIN = 'viewer-versions-admin-secret';
const PROJECT = 'github.com/acme/versions';
const runBrowser = chromiumAvailable();

let server: DevServer;
let browser: Browser;
let owner: string;
let author: string;
let member: string;
let persist: string;

async function post(token: string, route: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${server.url}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function teammate(handle: string): Promise<string> {
  expect((await post(owner, '/api/admin/users', { handle, role: 'member' })).status).toBe(201);
  const res = await post(owner, '/api/admin/devices', {
    user: handle,
    name: `${handle}-laptop`,
    scopes: ['read', 'ingest'],
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { token: string }).token;
}

async function remember(token: string, title: string, text: string, facts: string[]): Promise<number> {
  const client = new Client({ name: 'viewer-test', version: '0.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  const r = (await client.callTool({ name: 'remember', arguments: { project: PROJECT, title, text, facts } })) as {
    content: { text: string }[];
  };
  await client.close();
  return Number(/#(\d+)/.exec(r.content[0]!.text)?.[1]);
}

async function record(id: number): Promise<{ title: string; facts: string[] }> {
  const res = await fetch(`${server.url}/api/observations?ids=${id}`, {
    headers: { authorization: `Bearer ${owner}` },
  });
  return ((await res.json()) as { observations: { title: string; facts: string[] }[] }).observations[0]!;
}

beforeAll(async () => {
  if (!runBrowser) return;
  const dev = await loadDevServer();
  persist = mkdtempSync(path.join(tmpdir(), 'cairn-versions-'));
  server = await dev.startDevServer({
    port: await dev.freePort(),
    persistTo: persist,
    vars: { CAIRN_ADMIN_SECRET: ADMIN },
  });
  owner = await dev.mintDevToken(server.url, ADMIN, { team: 'viewer-versions', user: 'ada', device: 'laptop' });
  author = await teammate(`au${randomUUID().slice(0, 6)}`);
  member = await teammate(`me${randomUUID().slice(0, 6)}`);
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_FLAGS });
}, 420_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (persist) rmSync(persist, { recursive: true, force: true });
});

describe.skipIf(!runBrowser)('versions in the viewer', () => {
  it('lets the author edit a record, read its history, compare version 1 with now and revert to it', async () => {
    const tag = randomUUID().slice(0, 6);
    const first = `Cache lives in Redis ${tag}`;
    const id = await remember(author, first, 'Redis on port 6379.', ['port 6379']);

    const a = await openPage(browser, server.url);
    await signIn(a.page, author);
    await a.page.click(`li[data-key="observation:${id}"] button.card-body`);
    await a.page.click('#edit-open');
    await a.page.fill('#edit-title', `Cache moved to Valkey ${tag}`);
    await a.page.fill('#edit-facts', 'port 6380\nTLS on');
    await a.page.fill('#edit-reason', 'migrated in March');
    await a.page.click('#edit-save');
    await expect.poll(() => a.page.textContent('#edit-message'), POLL).toContain(`#${id} is version 2 now`);
    expect(await record(id)).toMatchObject({ title: `Cache moved to Valkey ${tag}`, facts: ['port 6380', 'TLS on'] });

    // History: version 2 says who, why and each field before and after; version 1 is the creation.
    await a.page.click('.detail-bar button.ghost:not(.close)');
    await a.page.click('#history-open');
    const v2 = a.page.locator('[data-version="2"]');
    await v2.waitFor();
    expect(await v2.textContent()).toContain('migrated in March');
    expect(await v2.locator('[data-field="title"] del').textContent()).toBe(first);
    expect(await v2.locator('[data-field="title"] ins').textContent()).toBe(`Cache moved to Valkey ${tag}`);
    expect(await v2.locator('[data-field="facts"] ins').textContent()).toBe('port 6380 · TLS on');
    expect(await a.page.textContent('[data-version="1"]')).toContain('created (remember)');

    // Compare version 1 with now, then revert to it.
    const v1 = a.page.locator('[data-version="1"]');
    await v1.locator('button[data-action="diff"]').click();
    await expect.poll(() => v1.locator('[data-diff="1"]').textContent(), POLL).toContain('version 1 → version 2');
    expect(await v1.locator('[data-diff="1"] [data-field="title"] del').textContent()).toBe(first);
    await v1.locator('button[data-action="revert"]').click();
    await expect
      .poll(() => a.page.textContent('#history-message'), POLL)
      .toContain(`#${id} is back to version 1: version 3 now`);
    expect(await record(id)).toMatchObject({ title: first, facts: ['port 6379'] });
    expect(a.watch.errors).toEqual([]);
    await a.page.context().close();
  });

  it("tells a teammate who is not the record's author that they cannot edit it, and changes nothing", async () => {
    const title = `Staging runs on 8080 ${randomUUID().slice(0, 6)}`;
    const id = await remember(author, title, 'Staging listens on 8080.', []);
    const m = await openPage(browser, server.url);
    await signIn(m.page, member);
    await m.page.click(`li[data-key="observation:${id}"] button.card-body`);
    await m.page.click('#edit-open');
    await m.page.fill('#edit-title', 'Staging runs on 8443');
    await m.page.click('#edit-save');
    await expect.poll(() => m.page.textContent('#edit-message'), POLL).toContain('Only its author or a team admin');
    expect(m.watch.errors.filter((e) => !/status of 403/.test(e))).toEqual([]);
    await m.page.context().close();
    expect((await record(id)).title).toBe(title);
  });
});
