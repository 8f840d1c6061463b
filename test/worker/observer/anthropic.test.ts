// The key path: one observer turn through the real Anthropic SDK against the fake Messages API on 127.0.0.1.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { loadMode } from '../../../src/observer/modes';
import { createProvider } from '../../../src/observer/providers';
import { createAnthropicProvider } from '../../../src/observer/providers/anthropic';
import { runTurn, type TurnOutcome } from '../../../src/observer/turn';
import type { ConversationState } from '../../../src/observer/conversation';
import type { ObserverRequest, ToolEvent } from '../../../src/observer/types';
import { fresh } from '../support/http';
import { T0, toolEvent } from '../../support/observer-events';
import { recorded, script } from './support/fake';
import type { FakeResponse } from '../../support/fake-llm';

const mode = loadMode('code');

interface MessagesBody {
  model: string;
  max_tokens: number;
  system: { type: string; text: string; cache_control?: { type: string } }[];
  messages: { role: string; content: { type: string; text: string; cache_control?: { type: string } }[] }[];
  [key: string]: unknown;
}

/** Events tagged with a scenario id so the fake answers from that scenario's script. */
function batch(scenario: string): ToolEvent[] {
  return [
    toolEvent(
      'Edit',
      { file_path: '/w/src/auth.ts', old_string: 'a', new_string: `b // SCENARIO:${scenario}` },
      { filePath: '/w/src/auth.ts' },
    ),
    toolEvent('Bash', { command: 'npm test' }, { stdout: '3 passed', stderr: '', exit_code: 0 }),
    toolEvent('Read', { file_path: '/w/src/session.ts' }, { content: 'export {}' }),
  ];
}

async function turn(
  scenario: string,
  responses: FakeResponse[] | null,
  state: ConversationState | null = null,
  events = batch(scenario),
): Promise<TurnOutcome> {
  if (responses) await script(scenario, responses);
  const provider = createProvider(env);
  expect(provider.name).toBe('anthropic');
  return runTurn(provider, {
    mode,
    session: {
      project: 'github.com/acme/widgets',
      sessionKey: `sess-${scenario}`,
      promptNumber: 1,
      userPrompt: 'Fix auth',
    },
    events,
    summary: null,
    now: T0,
    state,
    log: () => {},
  });
}

const failureOf = (o: TurnOutcome) => {
  if (o.kind !== 'failure') throw new Error(`expected a failure, got ${o.kind}`);
  return o.failure;
};

describe('an observer turn through the Anthropic SDK', () => {
  it('sends the model, a cache-marked system prefix and one block per event, and parses the reply', async () => {
    const id = fresh('anth-ok');
    const outcome = await turn(id, null);
    expect(outcome.kind).toBe('parsed');
    if (outcome.kind !== 'parsed') return;
    expect(outcome.observations).toHaveLength(3);
    expect(outcome.model).toBe('claude-haiku-5-5');
    expect(outcome.usage.inputTokens).toBeGreaterThan(0);
    // Evidence, not the model, decides what was modified and read.
    for (const o of outcome.observations) {
      expect(o.filesModified).toEqual(['/w/src/auth.ts']);
      expect(o.filesRead).toContain('/w/src/session.ts');
    }

    const [req] = await recorded(id);
    expect(req!.path).toBe('/v1/messages');
    expect(req!.headers['authorization']).toBe('Bearer test-anthropic-key');
    expect(req!.headers['anthropic-version']).toBeTruthy();
    const body = req!.body as MessagesBody;
    expect(body.model).toBe('claude-haiku-5-5');
    expect(body.system).toHaveLength(1);
    expect(body.system[0]!.cache_control).toEqual({ type: 'ephemeral' });
    expect(body.system[0]!.text).toContain('<observation>');
    for (const banned of ['temperature', 'top_p', 'top_k']) expect(body).not.toHaveProperty(banned);
    const userText = body.messages
      .at(-1)!
      .content.map((c) => c.text)
      .join('');
    expect(userText.match(/<observed_from_primary_session>/g)).toHaveLength(3);
    expect(userText).toContain('<what_happened>Edit</what_happened>');
    expect(userText).toContain('<what_happened>Bash</what_happened>');
  });

  it('marks the last stable history message as a second cache breakpoint on the next turn', async () => {
    const id = fresh('anth-cache');
    const first = await turn(id, null);
    if (first.kind !== 'parsed') throw new Error(first.kind);
    const second = await turn(id, null, first.state, [
      toolEvent('Bash', { command: `make build # SCENARIO:${id}` }, { stdout: 'built', exit_code: 0 }),
    ]);
    expect(second.kind).toBe('parsed');
    const requests = await recorded(id);
    const body = requests[1]!.body as MessagesBody;
    expect(body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(body.messages[1]!.content[0]!.cache_control).toEqual({ type: 'ephemeral' });
    expect(body.messages[2]!.content[0]!.cache_control).toBeUndefined();
    expect(body.messages[0]!.content[0]!.cache_control).toBeUndefined();
    expect(body.system[0]!.text).toBe((requests[0]!.body as MessagesBody).system[0]!.text);
  });

  it('maps a 429 with retry-after to a rate-limit failure that carries the wait', async () => {
    const failure = failureOf(
      await turn(fresh('anth-429'), [
        { status: 429, headers: { 'retry-after': '7' }, error: { type: 'rate_limit_error', message: 'slow down' } },
      ]),
    );
    expect(failure.kind).toBe('rate_limit');
    expect(failure.retryAfterMs).toBe(7000);
  });

  it('maps a 529 to an overload failure', async () => {
    expect(
      failureOf(await turn(fresh('anth-529'), [{ status: 529, error: { type: 'overloaded_error', message: 'busy' } }]))
        .kind,
    ).toBe('overloaded');
  });

  it('maps a 401 to an auth failure', async () => {
    expect(
      failureOf(
        await turn(fresh('anth-401'), [{ status: 401, error: { type: 'authentication_error', message: 'bad key' } }]),
      ).kind,
    ).toBe('auth');
  });

  it('maps a 403 to an auth failure', async () => {
    expect(
      failureOf(await turn(fresh('anth-403'), [{ status: 403, error: { type: 'permission_error', message: 'no' } }]))
        .kind,
    ).toBe('auth');
  });

  it('maps a spend-limit 429 to a spend-cap failure, not a rate limit', async () => {
    const failure = failureOf(
      await turn(fresh('anth-spend'), [
        {
          status: 429,
          error: {
            type: 'rate_limit_error',
            message: 'spend limit reached',
            details: { error_code: 'enforced_spend_limit_reached' },
          },
        },
      ]),
    );
    expect(failure.kind).toBe('spend_cap');
    expect(failure.retryAfterMs).toBeNull();
  });

  it('maps a 404 (unknown model or wrong endpoint) to a configuration failure', async () => {
    expect(
      failureOf(
        await turn(fresh('anth-404'), [
          { status: 404, error: { type: 'not_found_error', message: 'model: claude-nope' } },
        ]),
      ).kind,
    ).toBe('config');
  });

  it('maps a 400 to a bad-request failure', async () => {
    expect(
      failureOf(
        await turn(fresh('anth-400'), [{ status: 400, error: { type: 'invalid_request_error', message: 'bad' } }]),
      ).kind,
    ).toBe('bad_request');
  });

  it('maps other 5xx answers to a server failure', async () => {
    expect(
      failureOf(await turn(fresh('anth-500'), [{ status: 500, error: { type: 'api_error', message: 'oops' } }])).kind,
    ).toBe('server');
  });

  it('maps an unreachable endpoint to a network failure', async () => {
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: 'http://127.0.0.1:9', timeoutMs: 5000 });
    const outcome = await runTurn(provider, {
      mode,
      session: { project: 'p', sessionKey: 's', promptNumber: 1, userPrompt: '' },
      events: batch('none'),
      summary: null,
      now: T0,
      state: null,
    });
    expect(failureOf(outcome).kind).toBe('network');
  });

  it('confirms a prose reply without observations, keeps a preview and forgets the batch in the history', async () => {
    const outcome = await turn(fresh('anth-prose'), [{ text: 'Skipping — nothing new here, just routine work.' }]);
    expect(outcome.kind).toBe('prose');
    if (outcome.kind !== 'prose') return;
    expect(outcome.preview).toBe('Skipping — nothing new here, just routine work.');
    expect(outcome.state.messages).toHaveLength(0);
  });

  it('treats broken XML like prose', async () => {
    const outcome = await turn(fresh('anth-broken'), [{ text: '<observation><type>bugfix</type><title>never closed' }]);
    expect(outcome.kind).toBe('prose');
  });

  it('treats an empty reply as nothing to record', async () => {
    const outcome = await turn(fresh('anth-empty'), [{ text: '' }]);
    expect(outcome.kind).toBe('empty');
    if (outcome.kind === 'empty') expect(outcome.state.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('turns a prose reply about an exhausted quota into a spend-cap failure so the events wait', async () => {
    expect(
      failureOf(
        await turn(fresh('anth-quota'), [
          { text: 'Claude usage limit reached. Your weekly limit will reset on Monday.' },
        ]),
      ).kind,
    ).toBe('spend_cap');
  });

  it('turns a prose reply about refused credentials into an auth failure', async () => {
    expect(
      failureOf(await turn(fresh('anth-authtext'), [{ text: 'Failed to authenticate. API Error: 401' }])).kind,
    ).toBe('auth');
  });

  it('reads observations and the summary from one reply when both were asked for', async () => {
    const id = fresh('anth-both');
    await script(id, [
      {
        text: '<observation><type>change</type><title>Edited auth</title></observation>\n<summary><request>Fix auth</request><completed>Done</completed></summary>',
      },
    ]);
    const outcome = await runTurn(createProvider(env), {
      mode,
      session: { project: 'p', sessionKey: 's', promptNumber: 1, userPrompt: 'Fix auth' },
      events: batch(id),
      summary: { eventId: 'sum', lastAssistantMessage: 'Done.', occurredAt: T0, promptNumber: 1 },
      now: T0,
      state: null,
    });
    expect(outcome.kind === 'parsed' && outcome.observations).toHaveLength(1);
    expect(outcome.kind === 'parsed' && outcome.summary?.completed).toBe('Done');
  });
});

describe('the Anthropic adapter with a stub client', () => {
  it('returns empty text for a safety refusal', async () => {
    const client = {
      messages: {
        create: async () => ({
          model: 'claude-haiku-5-5',
          stop_reason: 'refusal',
          content: [{ type: 'text', text: 'I cannot help with that.' }],
          usage: { input_tokens: 5, output_tokens: 1 },
        }),
      },
    };
    const provider = createAnthropicProvider({
      apiKey: 'k',
      client: client as unknown as NonNullable<Parameters<typeof createAnthropicProvider>[0]['client']>,
    });
    const request: ObserverRequest = {
      system: 's',
      messages: [{ role: 'user', content: 'u' }],
      maxTokens: 10,
      events: [],
      summary: null,
    };
    expect((await provider.complete(request)).text).toBe('');
  });
});
