// Provider selection, the OpenAI-compatible adapter against the fake, and the Workers AI adapter with a spy.
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadMode } from '../../../src/observer/modes';
import { createProvider, selectProviderName } from '../../../src/observer/providers';
import { DEFAULT_WORKERS_AI_MODEL } from '../../../src/observer/providers/workers-ai';
import { runTurn, type TurnOutcome } from '../../../src/observer/turn';
import type { ObserverProvider } from '../../../src/observer/types';
import { fresh } from '../support/http';
import { T0, toolEvent } from '../../support/observer-events';
import { recorded, script } from './support/fake';

const mode = loadMode('code');
const session = { project: 'github.com/acme/widgets', sessionKey: 's-p', promptNumber: 1, userPrompt: 'Fix it' };
const turnWith = (provider: ObserverProvider, scenario: string): Promise<TurnOutcome> =>
  runTurn(provider, {
    mode,
    session,
    events: [toolEvent('Bash', { command: `npm test # SCENARIO:${scenario}` }, { stdout: 'ok', exit_code: 0 })],
    summary: null,
    now: T0,
    state: null,
    log: () => {},
  });

describe('selectProviderName', () => {
  it('uses anthropic when a key is set and nothing is asked for', () => {
    expect(selectProviderName({ ANTHROPIC_API_KEY: 'k' })).toBe('anthropic');
  });
  it('uses the heuristic observer when no key is set', () => {
    expect(selectProviderName({})).toBe('heuristic');
  });
  it('honours an explicit choice', () => {
    expect(selectProviderName({ OBSERVER_PROVIDER: 'heuristic', ANTHROPIC_API_KEY: 'k' })).toBe('heuristic');
    expect(selectProviderName({ OBSERVER_PROVIDER: 'openai', OPENAI_BASE_URL: 'http://x' })).toBe('openai');
    expect(selectProviderName({ OBSERVER_PROVIDER: 'workers-ai', AI: env.AI })).toBe('workers-ai');
  });
  it('falls back to the heuristic observer when the chosen one lacks what it needs', () => {
    expect(selectProviderName({ OBSERVER_PROVIDER: 'anthropic' })).toBe('heuristic');
    expect(selectProviderName({ OBSERVER_PROVIDER: 'openai' })).toBe('heuristic');
  });
  it('uses OBSERVER_MODEL when given', () => {
    expect(createProvider({ ...env, OBSERVER_MODEL: 'claude-sonnet-5-5' }).model).toBe('claude-sonnet-5-5');
  });
});

describe('the OpenAI-compatible adapter', () => {
  const openai = () => createProvider({ ...env, OBSERVER_PROVIDER: 'openai', OBSERVER_MODEL: 'gpt-test' });

  it('sends the system prompt and history as chat messages with a bearer key, and parses the reply', async () => {
    const id = fresh('oai-ok');
    const outcome = await turnWith(openai(), id);
    expect(outcome.kind).toBe('parsed');
    const [req] = await recorded(id);
    expect(req!.path).toBe('/v1/chat/completions');
    expect(req!.headers['authorization']).toBe('Bearer test-openai-key');
    const body = req!.body as { model: string; messages: { role: string; content: string }[] };
    expect(body.model).toBe('gpt-test');
    expect(body.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(body.messages[1]!.content).toContain('<observed_from_primary_session>');
    expect(body).not.toHaveProperty('temperature');
  });

  it.each([
    [
      { status: 429, headers: { 'retry-after': '3' }, error: { type: 'requests', message: 'slow' } },
      'rate_limit',
      3000,
    ],
    [{ status: 429, error: { type: 'insufficient_quota', message: 'quota' } }, 'spend_cap', null],
    [{ status: 401, error: { type: 'invalid_request_error', message: 'bad key' } }, 'auth', null],
    [{ status: 529, error: { type: 'overloaded_error', message: 'busy' } }, 'overloaded', null],
    [{ status: 500, error: { type: 'server_error', message: 'oops' } }, 'server', null],
    [{ status: 400, error: { type: 'invalid_request_error', message: 'bad' } }, 'bad_request', null],
    [{ status: 404, error: { type: 'model_not_found', message: 'no such model' } }, 'config', null],
  ])('maps %j to a %s failure', async (response, kind, retryAfterMs) => {
    const id = fresh('oai-err');
    await script(id, [response]);
    const outcome = await turnWith(openai(), id);
    expect(outcome.kind === 'failure' && outcome.failure.kind).toBe(kind);
    expect(outcome.kind === 'failure' && outcome.failure.retryAfterMs).toBe(retryAfterMs);
  });
});

describe('the Workers AI adapter', () => {
  afterEach(() => vi.restoreAllMocks());
  const workersAi = () => createProvider({ ...env, OBSERVER_PROVIDER: 'workers-ai', OBSERVER_MODEL: '' });

  it('calls env.AI.run with the model and the chat messages and reads the response text', async () => {
    const run = vi.spyOn(env.AI as unknown as { run: (...a: unknown[]) => Promise<unknown> }, 'run').mockResolvedValue({
      response: '<observation><type>discovery</type><title>Tests pass</title></observation>',
      usage: { prompt_tokens: 100, completion_tokens: 20 },
    });
    const outcome = await turnWith(workersAi(), 'wai');
    expect(run).toHaveBeenCalledTimes(1);
    const [model, inputs] = run.mock.calls[0] as [
      string,
      { messages: { role: string; content: string }[]; max_tokens: number },
    ];
    expect(model).toBe(DEFAULT_WORKERS_AI_MODEL);
    expect(inputs.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(inputs.messages[1]!.content).toContain('<observed_from_primary_session>');
    expect(outcome.kind === 'parsed' && outcome.observations[0]!.title).toBe('Tests pass');
    expect(outcome.kind === 'parsed' && outcome.usage.inputTokens).toBe(100);
  });

  it('reads replies in the chat-completions shape too', async () => {
    vi.spyOn(env.AI as unknown as { run: (...a: unknown[]) => Promise<unknown> }, 'run').mockResolvedValue({
      choices: [{ message: { content: '<observation><title>Shape two</title></observation>' } }],
    });
    const outcome = await turnWith(workersAi(), 'wai2');
    expect(outcome.kind === 'parsed' && outcome.observations[0]!.title).toBe('Shape two');
  });

  it.each([
    ['3040: Capacity temporarily exceeded, please try again.', 'overloaded'],
    ['4006: you have used up your daily free allocation of 10,000 neurons', 'spend_cap'],
    ['429 Too Many Requests', 'rate_limit'],
    ['10000: Authentication error', 'auth'],
    ['something odd happened', 'server'],
  ])('maps the error %j to a %s failure', async (message, kind) => {
    vi.spyOn(env.AI as unknown as { run: (...a: unknown[]) => Promise<unknown> }, 'run').mockRejectedValue(
      new Error(message),
    );
    const outcome = await turnWith(workersAi(), 'wai3');
    expect(outcome.kind === 'failure' && outcome.failure.kind).toBe(kind);
  });
});

describe('retryAfterMs', () => {
  it('reads milliseconds, seconds and HTTP dates, and gives null without a header', async () => {
    const { retryAfterMs } = await import('../../../src/observer/providers/anthropic');
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '1500' }))).toBe(1500);
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }))).toBe(2000);
    const now = Date.UTC(2026, 10, 30, 12, 0, 0);
    expect(retryAfterMs(new Headers({ 'retry-after': new Date(now + 30_000).toUTCString() }), now)).toBe(30_000);
    expect(retryAfterMs(new Headers())).toBeNull();
  });
});
