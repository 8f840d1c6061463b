// The observer conversation kept by the SessionDO: pure turn preparation, restart on budget or idling.
import type { Mode } from './modes';
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
  budgetChars?: number;
  idleMs?: number;
  /** For tests; a random id otherwise. */
  newGeneration?: () => string;
}

export function prepareTurn(_state: ConversationState | null, _input: PrepareInput): { request: ObserverRequest; state: ConversationState } {
  throw new Error('not implemented yet');
}

export function recordReply(state: ConversationState, _reply: ObserverReply): ConversationState {
  return state;
}
