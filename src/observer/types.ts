// Contracts between the SessionDO, the observer (prompts, providers, parser) and the store.
import type { ObservationContent, SummaryContent } from '#shared/wire/records';

/** One buffered hook event, as the SessionDO hands it to a turn (after claim and snapshot). */
export interface ToolEvent {
  eventId: string;
  toolName: string;
  /** Already redacted by the client and truncated (head 60% / elided / tail 30%) by the server. */
  toolInput: string;
  toolResponse: string;
  cwd: string;
  /** The client's project root (git top level): paths under it are shown relative to it. */
  projectRoot?: string | null;
  toolUseId: string | null;
  agentId: string | null;
  agentType: string | null;
  /** ms epoch: when the tool call happened (observation time = event time). */
  occurredAt: number;
  promptNumber: number;
}

export interface SummaryRequest {
  eventId: string;
  lastAssistantMessage: string;
  occurredAt: number;
  promptNumber: number;
}

/** A summary as parsed from the model: any field may be missing. */
export type ParsedSummaryFields = { [K in keyof SummaryContent]: string | null };

export interface ParsedSummary extends ParsedSummaryFields {
  skipped: boolean;
  skipReason: string | null;
}

export type ParseResult =
  | { valid: true; observations: ObservationContent[]; summary: ParsedSummary | null }
  | { valid: false };

/** The observer's word that stored record `id` is superseded by its `observation`-th observation of the reply. */
export interface ProposedCorrection {
  observation: number;
  id: number;
  reason: string;
}

export type OutputClass = 'xml' | 'idle' | 'prose';

export interface ChatMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** What a provider is asked. LLM providers use system + messages; the heuristic one reads the events. */
export interface ObserverRequest {
  /** Stable prefix (identity, rules, schema): marked for prompt caching. */
  system: string;
  messages: ChatMessage[];
  maxTokens: number;
  events: ToolEvent[];
  summary: SummaryRequest | null;
  /** Asks this model instead of the provider's own for this call (read-only turns, observer/model-choice.ts). */
  model?: string;
}

export interface ObserverUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export interface ObserverReply {
  text: string;
  usage: ObserverUsage;
  model: string;
}

export interface ObserverProvider {
  readonly name: 'anthropic' | 'openai' | 'workers-ai' | 'heuristic';
  readonly model: string;
  /** The model read-only turns ask instead, when the deployment names one. */
  readonly readOnlyModel?: string;
  complete(request: ObserverRequest): Promise<ObserverReply>;
}

/**
 * A provider failure, classified. `transient` kinds keep the events and retry after a back-off;
 * `blocked` kinds (auth, spend cap) keep the events and back off for long; nothing is dropped.
 */
export type ObserverFailureKind =
  | 'rate_limit'
  | 'overloaded'
  | 'spend_cap'
  | 'auth'
  | 'config'
  | 'bad_request'
  | 'network'
  | 'server';

export class ObserverFailure extends Error {
  constructor(
    readonly kind: ObserverFailureKind,
    message: string,
    readonly retryAfterMs: number | null = null,
    /** The provider's own error (HTTP status and error code, e.g. `401 authentication_error`) when it answered with one. */
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'ObserverFailure';
  }
}
