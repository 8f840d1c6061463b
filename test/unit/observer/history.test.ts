// The observer's history, capped per provider and model so that every request fits the model's window, with a
// short account of what was cut. Requests are measured the way a tokenizer sees them at worst: three ASCII
// characters a token (code and JSON run about 3.5 to 4), every other character a token of its own.
import { describe, expect, it } from 'vitest';
import type { ConversationState } from '../../../src/observer/conversation';
import { loadMode } from '../../../src/observer/modes';
import { DEFAULT_WORKERS_AI_MODEL } from '../../../src/observer/providers/workers-ai';
import { runTurn } from '../../../src/observer/turn';
import type { ObserverProvider, ObserverRequest, ToolEvent } from '../../../src/observer/types';
import { estimateTokens, providerWindow, windowOf } from '../../../src/observer/window';
import { configOf } from '../../../src/config';
import { T0, toolEvent } from '../../support/observer-events';

const mode = loadMode('code');
const session = {
  project: 'github.com/acme/widgets',
  sessionKey: 'sess-window',
  promptNumber: 1,
  userPrompt: 'Speed up the importer',
};

/** A provider that records each request and answers one titled observation per tool call. */
function recording(name: ObserverProvider['name'], model: string) {
  const requests: ObserverRequest[] = [];
  let n = 0;
  const provider: ObserverProvider = {
    name,
    model,
    async complete(request) {
      requests.push(request);
      const text = request.events
        .map(
          (e) =>
            `<observation><type>discovery</type><title>Finding ${++n} about ${e.toolName}</title><narrative>What call ${n} showed.</narrative></observation>`,
        )
        .join('\n');
      return { text, model, usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 } };
    },
  };
  return { provider, requests };
}

/** Tokens a request can take at most (prompt plus the reply it allows), counted as the header says. */
function worstTokens(r: ObserverRequest): number {
  const text = r.system + r.messages.map((m) => m.content).join('');
  let ascii = 0;
  let other = 0;
  for (let i = 0; i < text.length; i++) text.charCodeAt(i) < 128 ? ascii++ : other++;
  return Math.ceil(ascii / 3) + other + r.maxTokens;
}

/** Runs `turns` observer turns of `events()` each, keeping the conversation as the SessionDO does. */
async function session_(
  provider: ObserverProvider,
  turns: number,
  events: (turn: number) => ToolEvent[],
): Promise<ConversationState | null> {
  let state: ConversationState | null = null;
  for (let t = 0; t < turns; t++) {
    const outcome = await runTurn(provider, {
      mode,
      session,
      events: events(t),
      summary: null,
      now: T0 + t * 30_000,
      state,
      log: () => {},
    });
    if (outcome.kind === 'failure') throw outcome.failure;
    state = outcome.state;
  }
  return state;
}

const bigRead = (t: number, i: number, chars = 4_000) =>
  toolEvent(
    'Read',
    { file_path: `src/importer/part-${t}-${i}.ts` },
    `// part ${t}-${i}\n${'const row = parse(line);\n'.repeat(Math.ceil(chars / 25))}`.slice(0, chars),
  );

describe('the observer history on Workers AI (default model, a 24,000-token window)', () => {
  it('keeps every request of a long session inside the window, the reply it allows included', async () => {
    const { provider, requests } = recording('workers-ai', DEFAULT_WORKERS_AI_MODEL);
    await session_(provider, 40, (t) => [bigRead(t, 0), bigRead(t, 1), bigRead(t, 2)]);
    expect(requests).toHaveLength(40);
    for (const r of requests) expect(worstTokens(r)).toBeLessThanOrEqual(24_000);
  });

  it('keeps text outside ASCII (a token a character at worst) inside the window too', async () => {
    const { provider, requests } = recording('workers-ai', DEFAULT_WORKERS_AI_MODEL);
    const cjk = (t: number) =>
      toolEvent('Bash', { command: `cat notes-${t}.md` }, '导入器按行解析文件，每行写入一条记录。'.repeat(150));
    await session_(provider, 30, (t) => [cjk(t)]);
    for (const r of requests) expect(worstTokens(r)).toBeLessThanOrEqual(24_000);
  });

  it('cuts the oldest exchanges first and keeps the latest ones, in order, starting with the user', async () => {
    const { provider, requests } = recording('workers-ai', DEFAULT_WORKERS_AI_MODEL);
    await session_(provider, 30, (t) => [bigRead(t, 0), bigRead(t, 1), bigRead(t, 2)]);
    const last = requests.at(-1)!;
    const roles = last.messages.map((m) => m.role);
    expect(roles[0]).toBe('user');
    expect(roles.at(-1)).toBe('user');
    for (let i = 1; i < roles.length; i++) expect(roles[i]).not.toBe(roles[i - 1]);
    // More than the new batch is kept, at every turn: the observer always sees what it said about the calls just before.
    for (const r of requests.slice(1)) expect(r.messages.length).toBeGreaterThan(2);
    expect(last.messages.at(-2)!.content).toContain('Finding 87 about Read');
    expect(last.messages.map((m) => m.content).join('\n')).not.toContain('part-0-0.ts');
  });

  it('tells the observer what was cut: how many tool calls, and the titles it recorded for them', async () => {
    const { provider, requests } = recording('workers-ai', DEFAULT_WORKERS_AI_MODEL);
    await session_(provider, 30, (t) => [bigRead(t, 0), bigRead(t, 1), bigRead(t, 2)]);
    const first = requests.at(-1)!.messages[0]!.content;
    const cutCalls = /(\d+) tool calls? (?:were|was) cut/.exec(first);
    expect(cutCalls).not.toBeNull();
    // Every call is either still in the conversation or counted as cut.
    const shown = requests
      .at(-1)!
      .messages.filter((m) => m.role === 'user')
      .reduce((n, m) => n + (m.content.match(/<observed_from_primary_session>/g)?.length ?? 0), 0);
    expect(Number(cutCalls![1]) + shown).toBe(90);
    // The titles recorded most recently among the cut part are named.
    const keptFirstFinding = Number(/Finding (\d+) about/.exec(requests.at(-1)!.messages[1]!.content)![1]);
    expect(first).toContain(`Finding ${keptFirstFinding - 1} about Read`);
    expect(first).toContain('<user_request>Speed up the importer</user_request>');
  });

  it('keeps the account of what was cut short however long the session runs', async () => {
    const { provider, requests } = recording('workers-ai', DEFAULT_WORKERS_AI_MODEL);
    await session_(provider, 120, (t) => [bigRead(t, 0, 1_500), bigRead(t, 1, 1_500), bigRead(t, 2, 1_500)]);
    const first = requests.at(-1)!.messages[0]!.content;
    const note = first.slice(0, first.indexOf('<observed_from_primary_session>'));
    expect(note).toMatch(/tool calls were cut/);
    expect(note.length).toBeLessThan(4_000);
  });
});

describe('the observer history on Anthropic (a 200,000-token window)', () => {
  it('keeps the whole conversation up to its 60,000-character budget before cutting anything', async () => {
    const { provider, requests } = recording('anthropic', 'claude-haiku-5-5');
    await session_(provider, 12, (t) => [bigRead(t, 0, 1_500)]);
    // 12 small turns stay far under 60,000 characters: nothing is cut, the first message still opens the session.
    const last = requests.at(-1)!;
    expect(last.messages).toHaveLength(23);
    expect(last.messages[0]!.content).toContain('starting to observe a new coding session');
  });

  it('cuts past 60,000 characters and keeps the request under it', async () => {
    const { provider, requests } = recording('anthropic', 'claude-haiku-5-5');
    await session_(provider, 30, (t) => [bigRead(t, 0), bigRead(t, 1), bigRead(t, 2)]);
    const chars = (r: ObserverRequest) => r.messages.reduce((n, m) => n + m.content.length, 0);
    for (const r of requests) expect(chars(r)).toBeLessThanOrEqual(60_000);
    expect(requests.at(-1)!.messages.length).toBeGreaterThan(2);
  });
});

describe('the window of an observer model', () => {
  it('is the model page’s for a known model and its provider’s cautious default for any other', () => {
    expect(windowOf('workers-ai', DEFAULT_WORKERS_AI_MODEL)).toEqual({ contextTokens: 24_000, outputTokens: 4_096 });
    expect(windowOf('workers-ai', '@cf/some/new-model')).toEqual({ contextTokens: 24_000, outputTokens: 4_096 });
    expect(windowOf('anthropic', 'claude-haiku-5-5').contextTokens).toBe(200_000);
    expect(windowOf('openai', 'qwen2.5-coder:7b').contextTokens).toBe(32_768);
  });

  it('is the one the deployment states (OBSERVER_CONTEXT_TOKENS), with at most a quarter kept for the reply', () => {
    expect(windowOf('openai', 'llama3.1:8b', 8_192)).toEqual({ contextTokens: 8_192, outputTokens: 2_048 });
    expect(configOf({ OBSERVER_CONTEXT_TOKENS: '16384' }).observer.contextTokens).toBe(16_384);
    expect(configOf({}).observer.contextTokens).toBeUndefined();
    expect(() => configOf({ OBSERVER_CONTEXT_TOKENS: 'lots' })).toThrow(/OBSERVER_CONTEXT_TOKENS/);
  });

  it('is the smaller of the two models’ when read-only turns ask another model', () => {
    const w = providerWindow(
      { name: 'workers-ai', model: '@cf/big/model', readOnlyModel: DEFAULT_WORKERS_AI_MODEL },
      undefined,
    );
    expect(w.contextTokens).toBe(24_000);
  });

  it('bounds every request of a session on a small stated window', async () => {
    const { provider, requests } = recording('openai', 'llama3.1:8b');
    let state: ConversationState | null = null;
    for (let t = 0; t < 20; t++) {
      const outcome = await runTurn(provider, {
        mode,
        session,
        events: [bigRead(t, 0, 3_000)],
        summary: null,
        now: T0 + t * 30_000,
        state,
        log: () => {},
        contextTokens: 8_192,
      });
      if (outcome.kind === 'failure') throw outcome.failure;
      state = outcome.state;
    }
    for (const r of requests) expect(worstTokens(r)).toBeLessThanOrEqual(8_192);
  });

  it('estimates three ASCII characters a token and any other character a token', () => {
    expect(estimateTokens('abcdef')).toBe(2);
    expect(estimateTokens('abcd')).toBe(2);
    expect(estimateTokens('导入器')).toBe(3);
    expect(estimateTokens('')).toBe(0);
  });
});
