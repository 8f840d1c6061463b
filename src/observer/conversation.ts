// The observer conversation kept by the SessionDO: pure turn preparation, restart on idling, history cut to fit
// the character budget and the model's window.
import type { Mode } from './modes';
import {
  buildContinuation,
  buildNewPrompt,
  buildObservationMessage,
  buildSessionStart,
  buildSummaryMessage,
  buildSystemPrompt,
} from './prompts';
import { cutNote, fitMessages, NOTE_MAX_CHARS, tallyCut, type CutAccount } from './history';
import type { ChatMessage, ObserverReply, ObserverRequest, SummaryRequest, ToolEvent } from './types';
import { estimateTokens, type ModelWindow } from './window';

export interface ConversationState {
  /** Changes whenever the conversation restarts or its history is cut; stored with observations as the observer generation. */
  generation: string;
  startedAt: number;
  lastUsedAt: number;
  promptNumber: number;
  messages: ChatMessage[];
  /** Characters of all messages, for the restart budget. */
  chars: number;
  /** What was cut from this conversation to fit the model's window (history.ts); absent when nothing was. */
  cut?: CutAccount;
}

export interface SessionInfo {
  project: string;
  sessionKey: string;
  promptNumber: number;
  /** The user's request for this prompt (already stripped); '' when unknown. */
  userPrompt: string;
}

export interface PrepareInput {
  mode: Mode;
  session: SessionInfo;
  events: ToolEvent[];
  summary: SummaryRequest | null;
  now: number;
  /** History size (characters) past which the oldest exchanges are cut, whatever the model's window. */
  budgetChars?: number;
  /** Silence (ms) after which the conversation restarts: the provider's cache has expired by then anyway. */
  idleMs?: number;
  /** The model's window (window.ts): the request, its reply included, fits it. Unbounded when absent. */
  window?: ModelWindow;
  /** The reply's token limit; the window's output share by default. */
  maxTokens?: number;
  /** For tests; a random id otherwise. */
  newGeneration?: () => string;
  /** Prior records related to the batch (observer/prior.ts `priorBlock`), shown beside it; '' or absent for none. */
  prior?: string;
}

export const DEFAULT_BUDGET_CHARS = 60_000;
export const DEFAULT_IDLE_MS = 15 * 60_000;
export const DEFAULT_MAX_TOKENS = 8_192;
/** Tokens kept free beside the estimate: the chat template's own tokens around each message. */
const TEMPLATE_TOKENS = 256;

const sizeOf = (messages: ChatMessage[]) => messages.reduce((n, m) => n + m.content.length, 0);

/**
 * Builds the next request. The returned state already holds the new user message; the caller keeps it only
 * if the turn succeeds (then `recordReply`), so a failed call leaves the stored conversation untouched. A
 * history past the character budget or the model's window loses its oldest exchanges (history.ts), and the
 * first message kept then says what was cut.
 */
export function prepareTurn(
  state: ConversationState | null,
  input: PrepareInput,
): { request: ObserverRequest; state: ConversationState } {
  const { mode, session, events, summary, now } = input;
  const idleMs = input.idleMs ?? DEFAULT_IDLE_MS;
  const system = buildSystemPrompt(mode);
  const maxTokens = input.maxTokens ?? input.window?.outputTokens ?? DEFAULT_MAX_TOKENS;

  const parts: string[] = [];
  if (events.length > 0) parts.push(buildObservationMessage(events, input.prior));
  if (summary) parts.push(buildSummaryMessage(mode, summary, events.length > 0));
  const batch = parts.join('\n\n');
  const newGeneration = () => input.newGeneration?.() ?? crypto.randomUUID();

  const fresh = state === null || state.messages.length === 0;
  const idle = !fresh && now - state.lastUsedAt > idleMs;
  let next: ConversationState;
  if (fresh || idle) {
    // A restart inside a session (later prompt, or history dropped) says so; the very first turn does not.
    const continuing =
      idle || (state !== null && state.messages.length === 0 && state.promptNumber > 0) || session.promptNumber > 1;
    const opening = continuing ? buildContinuation(mode, session, now) : buildSessionStart(mode, session, now);
    next = {
      generation: newGeneration(),
      startedAt: now,
      lastUsedAt: now,
      promptNumber: session.promptNumber,
      messages: [{ role: 'user', content: `${opening}\n\n${batch}` }],
      chars: 0,
    };
  } else {
    const opening = session.promptNumber !== state.promptNumber ? buildNewPrompt(session, now) : '';
    const messages: ChatMessage[] = [
      ...state.messages,
      { role: 'user', content: opening ? `${opening}\n\n${batch}` : batch },
    ];
    next = fitted({ ...state, lastUsedAt: now, promptNumber: session.promptNumber, messages }, batch, {
      chars: input.budgetChars ?? DEFAULT_BUDGET_CHARS,
      tokens: input.window
        ? input.window.contextTokens - maxTokens - estimateTokens(system) - TEMPLATE_TOKENS
        : Number.MAX_SAFE_INTEGER,
      continuation: buildContinuation(mode, session, now),
      newGeneration,
    });
  }
  next.chars = sizeOf(next.messages);
  return { request: { system, messages: next.messages, maxTokens, events, summary }, state: next };
}

/**
 * The conversation as it is when it fits, else its newest exchanges that fit under a first message that
 * reopens the session (`continuation`) and says what was cut. A new batch too big for the window alone is
 * sent as it is (turns are capped at TURN_MAX_CHARS, src/session/policy.ts).
 */
function fitted(
  c: ConversationState,
  batch: string,
  o: { chars: number; tokens: number; continuation: string; newGeneration: () => string },
): ConversationState {
  const fits =
    sizeOf(c.messages) <= o.chars && c.messages.reduce((n, m) => n + estimateTokens(m.content), 0) <= o.tokens;
  if (fits) return c;
  // Room for the first message's header: the continuation and the note of what was cut.
  const header = o.continuation.length + NOTE_MAX_CHARS + 4;
  const { kept, cut } = fitMessages(
    c.messages,
    { chars: o.chars - header, tokens: o.tokens - estimateTokens(o.continuation) - NOTE_MAX_CHARS },
    estimateTokens,
  );
  if (cut.length === 0) return c;
  const account = tallyCut(cut, c.cut);
  // Only the new message left: its batch goes under the continuation (which names the prompt) alone.
  const first = kept.length === 1 ? batch : kept[0]!.content;
  kept[0] = { role: 'user', content: `${o.continuation}\n\n${cutNote(account)}\n\n${first}` };
  return { ...c, generation: o.newGeneration(), messages: kept, cut: account };
}

// An empty assistant turn is rejected by chat APIs; this stands for "nothing worth recording".
export const EMPTY_REPLY_MARKER = '<!-- nothing to record -->';

/** Appends the model's reply so the next turn continues the same conversation. */
export function recordReply(state: ConversationState, reply: Pick<ObserverReply, 'text'>): ConversationState {
  const text = reply.text.trim() === '' ? EMPTY_REPLY_MARKER : reply.text;
  const messages: ChatMessage[] = [...state.messages, { role: 'assistant', content: text }];
  return { ...state, messages, chars: sizeOf(messages) };
}

/** Drops the pending user message (its reply was unusable prose: better forgotten than imitated). */
export function dropPending(state: ConversationState): ConversationState {
  const last = state.messages[state.messages.length - 1];
  if (!last || last.role !== 'user') return state;
  const messages = state.messages.slice(0, -1);
  return { ...state, messages, chars: sizeOf(messages) };
}
