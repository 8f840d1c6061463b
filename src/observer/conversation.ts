// The observer conversation kept by the SessionDO: pure turn preparation, restart on budget or idling.
import type { Mode } from './modes';
import { buildContinuation, buildNewPrompt, buildObservationMessage, buildSessionStart, buildSummaryMessage, buildSystemPrompt } from './prompts';
import type { ChatMessage, ObserverReply, ObserverRequest, SummaryRequest, ToolEvent } from './types';

export interface ConversationState {
  /** Changes whenever the conversation restarts; stored with observations as the observer generation. */
  generation: string;
  startedAt: number;
  lastUsedAt: number;
  promptNumber: number;
  messages: ChatMessage[];
  /** Characters of all messages, for the restart budget. */
  chars: number;
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
  /** History size (characters) past which the conversation restarts. */
  budgetChars?: number;
  /** Silence (ms) after which the conversation restarts: the provider's cache has expired by then anyway. */
  idleMs?: number;
  maxTokens?: number;
  /** For tests; a random id otherwise. */
  newGeneration?: () => string;
}

export const DEFAULT_BUDGET_CHARS = 60_000;
export const DEFAULT_IDLE_MS = 15 * 60_000;
export const DEFAULT_MAX_TOKENS = 8_192;

const sizeOf = (messages: ChatMessage[]) => messages.reduce((n, m) => n + m.content.length, 0);

/**
 * Builds the next request. The returned state already holds the new user message; the caller keeps it only
 * if the turn succeeds (then `recordReply`), so a failed call leaves the stored conversation untouched.
 */
export function prepareTurn(state: ConversationState | null, input: PrepareInput): { request: ObserverRequest; state: ConversationState } {
  const { mode, session, events, summary, now } = input;
  const budget = input.budgetChars ?? DEFAULT_BUDGET_CHARS;
  const idleMs = input.idleMs ?? DEFAULT_IDLE_MS;

  const parts: string[] = [];
  if (events.length > 0) parts.push(buildObservationMessage(events));
  if (summary) parts.push(buildSummaryMessage(mode, summary, events.length > 0));
  const batch = parts.join('\n\n');

  const fresh = state === null || state.messages.length === 0;
  const stale = !fresh && (now - state.lastUsedAt > idleMs || state.chars + batch.length > budget);

  let base: ConversationState;
  let opening: string;
  if (fresh || stale) {
    base = {
      generation: input.newGeneration?.() ?? crypto.randomUUID(),
      startedAt: now,
      lastUsedAt: now,
      promptNumber: session.promptNumber,
      messages: [],
      chars: 0,
    };
    // A restart inside a session (later prompt, or history dropped) says so; the very first turn does not.
    const continuing = stale || (state !== null && state.messages.length === 0 && state.promptNumber > 0) || session.promptNumber > 1;
    opening = continuing ? buildContinuation(mode, session, now) : buildSessionStart(mode, session, now);
  } else {
    base = state;
    opening = session.promptNumber !== state.promptNumber ? buildNewPrompt(session, now) : '';
  }

  const content = opening ? `${opening}\n\n${batch}` : batch;
  const messages: ChatMessage[] = [...base.messages, { role: 'user', content }];
  const next: ConversationState = {
    ...base,
    lastUsedAt: now,
    promptNumber: session.promptNumber,
    messages,
    chars: sizeOf(messages),
  };
  return {
    request: {
      system: buildSystemPrompt(mode),
      messages,
      maxTokens: input.maxTokens ?? DEFAULT_MAX_TOKENS,
      events,
      summary,
    },
    state: next,
  };
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
