// `cairn status`, `cairn admin health` and the viewer (headless Chromium) against a real `wrangler dev` whose
// observer (a fake Messages API on 127.0.0.1) refuses the key: all say memory is paused, with the provider's
// code; once the key works,
// `cairn admin observer retry` resumes it and every event is stored. Polls with a bound: the service's alarms
// run on their own clock here; nothing asserts how fast.
import { randomUUID } from 'node:crypto';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_PATH, chromiumAvailable } from '../../../test/support/chromium';
import { CHROMIUM_FLAGS, openPage, signIn } from '../../../test/node/viewer/browser';
// @ts-expect-error plain ESM script without types
import { mintDevToken, startDevServer } from '../../../scripts/dev-server.mjs';
import { startFakeLlm } from '../../../test/support/fake-llm';
import { run } from '../../src/run';
import { deadPort, hookJson, machine, memIo, tempDir } from '../support';

const SECRET = 'health-e2e-secret';
const scenario = `key-${randomUUID().slice(0, 8)}`;
const REFUSED = { status: 401, error: { type: 'authentication_error', message: 'invalid x-api-key' } };

interface Dev {
  url: string;
  stop(): Promise<void>;
}
let dev: Dev;
let fake: Awaited<ReturnType<typeof startFakeLlm>>;
let token = '';

const script = (responses: unknown[]) =>
  fetch(`${fake.url}/__scenario/${scenario}`, { method: 'POST', body: JSON.stringify({ responses }) });

beforeAll(async () => {
  fake = await startFakeLlm();
  await script(Array.from({ length: 200 }, () => REFUSED));
  dev = await startDevServer({
    port: await deadPort(),
    persistTo: tempDir('cairn-health-e2e-'),
    vars: {
      CAIRN_ADMIN_SECRET: SECRET,
      OBSERVER_PROVIDER: 'anthropic',
      ANTHROPIC_API_KEY: 'sk-ant-wrong',
      ANTHROPIC_BASE_URL: fake.url,
    },
    timeoutMs: 120_000,
  });
  token = await mintDevToken(dev.url, SECRET, { team: 'health', user: 'ada', device: 'laptop' });
}, 300_000);

afterAll(async () => {
  await dev?.stop();
  await fake?.close();
}, 30_000);

async function cairn(env: Record<string, string | undefined>, ...argv: string[]) {
  const io = memIo({ env });
  const code = await run(argv, io);
  return { code, out: io.stdout, err: io.stderr };
}

async function until<T>(what: string, get: () => Promise<T>, ok: (v: T) => boolean, ms = 90_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

describe('memory paused by a refused observer key', () => {
  it('is said by cairn status and cairn admin health, and resumes on cairn admin observer retry with every event stored', async () => {
    const m = machine(dev.url, token);
    const env = { ...m.env, CAIRN_SENDER: 'off' };
    const session = randomUUID();
    const hook = async (event: string, fields: Record<string, unknown>) => {
      const io = memIo({
        env,
        cwd: m.home,
        stdin: hookJson({ session_id: session, cwd: m.home, hook_event_name: event, ...fields }),
      });
      expect(await run(['hook', event === 'UserPromptSubmit' ? 'user-prompt-submit' : 'post-tool-use'], io)).toBe(0);
    };
    await hook('UserPromptSubmit', { prompt: 'make the release' });
    for (let i = 0; i < 3; i++)
      await hook('PostToolUse', {
        tool_name: 'Bash',
        tool_input: { command: `SCENARIO:${scenario} step ${i}` },
        tool_response: { stdout: `done ${i}` },
        tool_use_id: `tu-${i}`,
      });
    expect((await cairn(env, 'flush', '--timeout', '30')).code).toBe(0);

    const status = await until(
      'cairn status',
      () => cairn(env, 'status'),
      (r) => r.out.includes('Memory is paused'),
    );
    expect(status.out).toMatch(
      /memory: {2}Memory is paused since \d\d:\d\d UTC: the observer's API key was refused \(401 authentication_error\)/,
    );
    expect(status.out).toContain('cairn admin observer retry');
    if (chromiumAvailable()) {
      const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_FLAGS });
      try {
        const { page, watch } = await openPage(browser, dev.url);
        await signIn(page, token);
        const banner = page.locator('#memory-notice');
        await banner.waitFor({ state: 'visible' });
        expect(await banner.textContent()).toMatch(
          /^Memory is paused since .*401 authentication_error.*nothing is lost\.$/,
        );
        expect(watch.errors).toEqual([]);
      } finally {
        await browser.close();
      }
    }

    // Every event waits; the team's view of a session's backlog follows the session's reports, so it may lag a moment.
    const health = await until(
      'cairn admin health',
      () => cairn(env, 'admin', 'health'),
      (r) => /events: 3 pending in 1 session\(s\)/.test(r.out),
    );
    expect(health.code).toBe(0);
    expect(health.out).toMatch(/observer: anthropic \(.+\): FAILING since .+ \(401 authentication_error\); next try /);
    expect(health.out).toMatch(/provider said: anthropic 401 authentication_error: .*invalid x-api-key/);
    expect(health.out).toMatch(/events: 3 pending in 1 session\(s\)/);
    expect(health.out).toMatch(/database DB: [\d.]+ MB of 10\.00 GB/);
    const operator = await until(
      'cairn admin health --operator',
      () => cairn({ ...env, CAIRN_ADMIN_SECRET: SECRET }, 'admin', 'health', '--operator'),
      (r) => /3 pending/.test(r.out),
    );
    expect(operator.out).toMatch(/health: observer failing \(401 authentication_error\); 3 pending/);

    // The key works again; an admin says so.
    await script([]);
    const retry = await cairn(env, 'admin', 'observer', 'retry');
    expect(retry.code).toBe(0);
    expect(retry.out).toContain('1 session(s) with waiting events woken');
    const after = await until(
      'health after the retry',
      async () =>
        JSON.parse((await cairn(env, 'admin', 'health', '--json')).out) as {
          observer: { state: string };
          events: { pending: number };
        },
      (h) => h.observer.state === 'ok' && h.events.pending === 0,
    );
    expect(after.observer.state).toBe('ok');
    const stored = await fetch(`${dev.url}/api/sessions/${session}/status`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(((await stored.json()) as { observations_stored: number }).observations_stored).toBe(3);
    expect((await cairn(env, 'status')).out).toContain('memory:  ok');
  }, 240_000);
});
