// The viewer's spend panel in headless Chromium against a real `wrangler dev` whose observer is the real
// Anthropic SDK talking to the fake Messages API: the tokens the fake reported show up per model with the
// estimated cost from the deployment's price table (OBSERVER_PRICES); members see no spend button; an admin without the admin scope
// gets a sentence, not an error. Saves test-results/viewer-spend.png.
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsageReport } from '#shared/wire/usage';
import { formatUsd } from '../../../viewer/src/i18n';
import { CHROMIUM_PATH, chromiumAvailable } from '../../support/chromium';
import { startFakeLlm } from '../../support/fake-llm';
import { CHROMIUM_FLAGS, loadDevServer, openPage, signIn, type DevServer } from './browser';

const ADMIN = 'viewer-spend-admin-secret';
const USAGE = { input: 120_000, output: 20_000, cacheRead: 50_000, cacheWrite: 10_000 };
// The deployment's own price for its model (OBSERVER_PRICES), USD per million tokens: one call above costs
// (120,000 × 2 + 20,000 × 10 + 50,000 × 0.2 + 10,000 × 2.5) / 1e6 = $0.475.
const MODEL = 'spend-test-model';
const PRICE = { input: 2, output: 10, cache_read: 0.2, cache_write: 2.5 };
const COST_PER_CALL = 0.475;
const scenario = `spend-${randomUUID().slice(0, 8)}`;
const runBrowser = chromiumAvailable();

let server: DevServer;
let fake: Awaited<ReturnType<typeof startFakeLlm>>;
let browser: Browser;
let owner: string;
let persist: string;
let results: string;

async function post(token: string, route: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${server.url}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** A teammate's device token (role and scopes as given), enrolled by the owner. */
async function teammate(handle: string, role: 'admin' | 'member', scopes: string[]): Promise<string> {
  expect((await post(owner, '/api/admin/users', { handle, role })).status).toBe(201);
  const res = await post(owner, '/api/admin/devices', { user: handle, name: `${handle}-laptop`, scopes });
  expect(res.status).toBe(201);
  return ((await res.json()) as { token: string }).token;
}

async function usage(): Promise<UsageReport> {
  const res = await fetch(`${server.url}/api/admin/usage?days=30`, { headers: { authorization: `Bearer ${owner}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as UsageReport;
}

beforeAll(async () => {
  if (!runBrowser) return;
  const dev = await loadDevServer();
  results = path.join(dev.ROOT, 'test-results');
  mkdirSync(results, { recursive: true });
  fake = await startFakeLlm();
  // Every call in this scenario reports the same tokens, so the expected figures are known in advance.
  await fetch(`${fake.url}/__scenario/${scenario}`, {
    method: 'POST',
    body: JSON.stringify({ responses: Array.from({ length: 20 }, () => ({ usage: USAGE })) }),
  });
  persist = mkdtempSync(path.join(tmpdir(), 'cairn-spend-'));
  server = await dev.startDevServer({
    port: await dev.freePort(),
    persistTo: persist,
    vars: {
      CAIRN_ADMIN_SECRET: ADMIN,
      OBSERVER_PROVIDER: 'anthropic',
      OBSERVER_MODEL: MODEL,
      ANTHROPIC_API_KEY: 'test-anthropic-key',
      ANTHROPIC_BASE_URL: fake.url,
      OBSERVER_PRICES: JSON.stringify({ [MODEL]: PRICE }),
    },
  });
  owner = await dev.mintDevToken(server.url, ADMIN, { team: 'viewer-spend', user: 'ada', device: 'laptop' });
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_FLAGS });
  const session = randomUUID();
  const event = (extra: Record<string, unknown>) => ({
    event_id: randomUUID(),
    session_id: session,
    project: 'github.com/acme/spend',
    cwd: '/work/spend',
    occurred_at: Date.now(),
    ...extra,
  });
  expect((await post(owner, '/api/sessions/init', event({ prompt: 'Make the build green' }))).status).toBeLessThan(300);
  const tool = {
    tool_name: 'Bash',
    tool_input: { command: `SCENARIO:${scenario} npm run build` },
    tool_response: { stdout: 'built', stderr: '', exit_code: 0 },
  };
  expect((await post(owner, '/api/sessions/observations', event(tool))).status).toBeLessThan(300);
  // The observer runs after the answer: wait until its call is metered.
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && (await usage()).models.length === 0) await new Promise((r) => setTimeout(r, 300));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await fake?.close();
  if (persist) rmSync(persist, { recursive: true, force: true });
});

describe.skipIf(!runBrowser)('spend panel in the browser', () => {
  it('shows each model’s tokens and estimated cost as the provider reported them and the price table prices them', async () => {
    const recorded = (
      (await (await fetch(`${fake.url}/__scenario/${scenario}`)).json()) as { requests: { body: { model: string } }[] }
    ).requests;
    expect(recorded.map((r) => r.body.model)).toContain(MODEL);
    const calls = recorded.length;
    const cost = Math.round(calls * COST_PER_CALL * 1e6) / 1e6;
    const report = await usage();
    expect(report.models.map((m) => [m.model, m.calls, m.estimated_cost_usd])).toEqual([[MODEL, calls, cost]]);

    const { page, watch } = await openPage(browser, server.url);
    await signIn(page, owner);
    await page.click('#spend');
    const row = page.locator(`#spend-models tr[data-model="${MODEL}"]`);
    await row.waitFor();
    const cells = await row.locator('td').allTextContents();
    const en = (n: number) => n.toLocaleString('en');
    expect(cells).toEqual([
      en(calls),
      en(calls * USAGE.input),
      en(calls * USAGE.output),
      en(calls * USAGE.cacheRead),
      en(calls * USAGE.cacheWrite),
      formatUsd('en', cost),
    ]);
    expect(await page.textContent('#spend-total')).toBe(formatUsd('en', cost));
    expect(await page.textContent('#spend-observer')).toContain(`anthropic · ${MODEL}`);
    await page.screenshot({ path: path.join(results, 'viewer-spend.png') });
    expect(watch.errors).toEqual([]);
    expect(watch.dialogs).toEqual([]);
    await page.context().close();
  });

  it('offers no spend button to a member, and tells an admin whose token lacks the admin scope why there is nothing to show', async () => {
    const member = await teammate(`m${randomUUID().slice(0, 6)}`, 'member', ['read', 'ingest']);
    const { page } = await openPage(browser, server.url);
    await signIn(page, member);
    await page.waitForSelector('#live-status');
    expect(await page.isVisible('#spend')).toBe(false);
    await page.context().close();

    const admin = await teammate(`a${randomUUID().slice(0, 6)}`, 'admin', ['read', 'ingest']);
    const second = await openPage(browser, server.url);
    await signIn(second.page, admin);
    await second.page.click('#spend');
    await expect.poll(() => second.page.textContent('#detail')).toContain('Only team owners and admins');
    expect(await second.page.locator('#spend-models').count()).toBe(0);
    await second.page.context().close();
  });
});
