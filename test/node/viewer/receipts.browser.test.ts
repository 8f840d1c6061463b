// The viewer's session page lists the memories that went into the session (its receipts, issue 34) in headless
// Chromium against a real `wrangler dev`: an agent session asks for the SessionStart index naming its session id,
// and the session page then shows each record the index sent, how its code stood when it was sent, and the counts.
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

/** A click's answer arrives after a round trip to wrangler dev: seconds on a loaded 2-core machine. */
const POLL = { timeout: 20_000, interval: 200 };
const ADMIN = 'viewer-receipts-admin-secret';
const PROJECT = `github.com/acme/receipts-${randomUUID().slice(0, 6)}`;
const SESSION = randomUUID();
const runBrowser = chromiumAvailable();

let server: DevServer;
let browser: Browser;
let token: string;
let persist: string;

async function ingest(route: string, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${server.url}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      event_id: randomUUID(),
      session_id: SESSION,
      project: PROJECT,
      cwd: '/work/widgets',
      occurred_at: Date.now(),
      ...body,
    }),
  });
  expect(res.status, await res.clone().text()).toBeLessThan(300);
}

async function remember(title: string): Promise<number> {
  const client = new Client({ name: 'viewer-test', version: '0.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  const r = (await client.callTool({
    name: 'remember',
    arguments: { project: PROJECT, title, text: `${title}.` },
  })) as {
    content: { text: string }[];
  };
  await client.close();
  return Number(/#(\d+)/.exec(r.content[0]!.text)?.[1]);
}

beforeAll(async () => {
  if (!runBrowser) return;
  const dev = await loadDevServer();
  persist = mkdtempSync(path.join(tmpdir(), 'cairn-receipts-'));
  server = await dev.startDevServer({
    port: await dev.freePort(),
    persistTo: persist,
    vars: { CAIRN_ADMIN_SECRET: ADMIN },
  });
  token = await dev.mintDevToken(server.url, ADMIN, { team: 'viewer-receipts', user: 'ada', device: 'laptop' });
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_FLAGS });
}, 420_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (persist) rmSync(persist, { recursive: true, force: true });
});

describe.skipIf(!runBrowser)('receipts on the session page', () => {
  it('lists the memories the SessionStart index sent into the session, with their evidence and the counts', async () => {
    const title = `The widget cache is rebuilt at start ${randomUUID().slice(0, 6)}`;
    const id = await remember(title);
    await ingest('/api/sessions/init', { prompt: 'Make the widget build green' });
    await ingest('/api/sessions/observations', {
      tool_name: 'Bash',
      tool_input: { command: 'npm test', description: 'Run npm test' },
      tool_response: { stdout: 'FAIL src/widget.test.ts', stderr: '', exit_code: 1 },
    });
    // The agent session's SessionStart index, naming the session (what the hooks client sends).
    const q = new URLSearchParams({ project: PROJECT, session: SESSION });
    const index = await fetch(`${server.url}/api/context?${q.toString()}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(await index.text()).toContain(title);

    const { page, watch } = await openPage(browser, server.url);
    await signIn(page, token);
    await page.waitForSelector('#cards .card:has-text("npm test")', POLL);
    await page.locator('#cards .card', { hasText: 'npm test' }).first().locator('button').click();
    await page.click('#detail .actions button');
    await page.waitForSelector('#detail [data-record^="session:"]', POLL);
    const receipt = page.locator(`#detail .memories [data-receipt="${id}"]`);
    await receipt.waitFor(POLL);
    expect(await receipt.locator('.card-title').textContent()).toBe(title);
    // Sent without a checkout: not checked, by the session-start index.
    expect(await receipt.locator('.badge.evidence').getAttribute('data-evidence')).toBe('unknown');
    expect(await receipt.locator('.badge.evidence').textContent()).toBe('not checked');
    expect(await receipt.textContent()).toContain('session start');
    const n = await page.locator('#detail .memories [data-receipt]').count();
    expect(await page.textContent('#detail .memories-count')).toBe(`${n} used · 0 stale when sent`);
    expect(watch.errors).toEqual([]);
    await page.context().close();
  });
});
