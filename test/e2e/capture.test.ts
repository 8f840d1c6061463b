// The capture policy `ask` inside the real Claude Code CLI (pinned version, scripted model, wrangler dev): an admin
// sets capture to ask; the first prompt in the checkout is blocked by cairn's UserPromptSubmit hook (it never
// reaches the model, nothing reaches the server), `/cairn:capture on` answers it, and the next session is recorded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { mintDevToken, startDevServer } from '../../scripts/dev-server.mjs';
// @ts-expect-error plain ESM script without types
import { buildAll } from '../../scripts/build.mjs';
import { deadPort } from '../../hooks-client/test/support';
import { startFakeAgentModel, type FakeAgentModel } from '../support/fake-agent-model';
import { startFakeLlm } from '../support/fake-llm';
import {
  cairn,
  claudeBinary,
  claudePrint,
  newMachine,
  pinnedClaudeVersion,
  runProcess,
  waitFor,
  type Machine,
} from './support';

const ADMIN = 'e2e-capture-admin';

let dev: { url: string; stop(): Promise<void> };
let observer: { url: string; close(): Promise<void> };
let model: FakeAgentModel;
let m: Machine;
let token = '';

async function sessionView(sessionId: string) {
  const res = await fetch(`${dev.url}/api/viewer/sessions?key=${encodeURIComponent(sessionId)}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return res.ok ? ((await res.json()) as { observations: Array<{ id: number }>; summaries: unknown[] }) : null;
}

beforeAll(async () => {
  await buildAll({ quiet: true });
  observer = await startFakeLlm();
  model = await startFakeAgentModel();
  dev = (await startDevServer({
    port: await deadPort(),
    snapshot: true,
    vars: {
      CAIRN_ADMIN_SECRET: ADMIN,
      OBSERVER_PROVIDER: 'anthropic',
      ANTHROPIC_API_KEY: 'test-observer-key',
      ANTHROPIC_BASE_URL: observer.url,
    },
    timeoutMs: 180_000,
  })) as typeof dev;
  token = await mintDevToken(dev.url, ADMIN, { team: 'e2e-capture', user: 'dev', device: 'laptop' });
  m = newMachine(model.url);
  expect((await cairn(m, ['login', '--url', dev.url, '--token', token])).code).toBe(0);
  const install = await cairn(m, ['install']);
  expect(install.code, install.stderr).toBe(0);
}, 300_000);

afterAll(async () => {
  await dev?.stop();
  await model?.close();
  await observer?.close();
}, 60_000);

describe(`Claude Code ${pinnedClaudeVersion()}: capture ask`, () => {
  it('blocks the first prompt with how to answer, and records the next session once /cairn:capture on answered', async () => {
    const set = await fetch(`${dev.url}/api/admin/settings`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ capture: 'ask' }),
    });
    expect(set.status).toBe(200);
    const work = (id: string) =>
      model.script(id, [
        [{ type: 'tool_use', name: 'Bash', input: { command: `echo ${id}`, description: 'Print a marker' } }],
        [{ type: 'text', text: `Printed (${id}).` }],
      ]);

    // Asked: the prompt is blocked by the hook, so the model never sees it, and the reason says how to answer.
    work('e2e-ask-1');
    const asked = await claudePrint(m, 'SCENARIO:e2e-ask-1 print a marker', ['Bash']);
    expect(model.requests.filter((r) => r.scenario === 'e2e-ask-1')).toEqual([]);
    expect(asked.stdout + asked.stderr).toContain('/cairn:capture on');
    expect((await cairn(m, ['flush', '--timeout', '30'])).code).toBe(0);
    // The server holds no session of it (the viewer answers 404 for a session it does not know).
    expect(asked.sessionId).not.toBe('');
    expect(await sessionView(asked.sessionId)).toBeNull();

    // The answer, from inside Claude Code: its `!` line runs `cairn capture on` in the checkout.
    const answered = await runProcess(claudeBinary(), ['-p', '/cairn:capture on', '--output-format', 'json'], {
      env: m.env,
      cwd: m.repo,
      timeoutMs: 90_000,
    });
    expect(answered.code, answered.stdout + answered.stderr).toBe(0);
    expect((await cairn(m, ['capture'])).stdout).toContain('are recorded');

    // The next session in the checkout is recorded.
    work('e2e-ask-2');
    const recorded = await claudePrint(m, 'SCENARIO:e2e-ask-2 print a marker', ['Bash']);
    expect(recorded.code, recorded.stdout + recorded.stderr).toBe(0);
    expect(recorded.result).toContain('Printed (e2e-ask-2)');
    expect((await cairn(m, ['flush', '--timeout', '30'])).code).toBe(0);
    await waitFor('the answered session to be observed', async () => {
      const v = await sessionView(recorded.sessionId);
      return v && v.observations.length >= 1 ? v : null;
    });
  });
});
