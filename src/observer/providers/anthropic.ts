// Observer provider on the Anthropic Messages API through the official SDK, with prompt caching.
import { BaseAnthropic } from '@anthropic-ai/sdk/client';
import { meteredFetch } from '../../db/meter-bindings';
import { APIConnectionError, APIError } from '@anthropic-ai/sdk/core/error';
import { Messages, type MessageParam, type TextBlockParam } from '@anthropic-ai/sdk/resources/messages/messages';
import {
  ObserverFailure,
  type ChatMessage,
  type ObserverProvider,
  type ObserverReply,
  type ObserverRequest,
} from '../types';

export const DEFAULT_ANTHROPIC_MODEL = 'claude-haiku-5-5';

/**
 * The SDK's own client (auth, headers, errors, timeouts) with only the Messages resource. The SDK's `Anthropic`
 * class constructs every resource (beta, files, models, organization, skills, …), which keeps ~320 KB of
 * minified code in the Worker bundle for the one call the observer makes (BENCHMARKS.md, "Cold start").
 */
export class MessagesClient extends BaseAnthropic {
  readonly messages: Messages = new Messages(this);
}

export interface AnthropicOptions {
  apiKey: string;
  baseURL?: string;
  model?: string;
  timeoutMs?: number;
  /** For unit tests: a pre-built client. */
  client?: MessagesClient;
}

const SPEND_CODES = new Set([
  'enforced_spend_limit_reached',
  'contract_spend_limit_reached',
  'linked_organization_spend_limit_reached',
]);

/** Retry-after in ms from `retry-after-ms` or `retry-after` (seconds or an HTTP date); null when absent. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | null {
  const ms = headers?.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const raw = headers?.get('retry-after');
  if (!raw) return null;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(raw);
  return Number.isFinite(date) ? Math.max(0, date - now) : null;
}

/** Maps anything the SDK throws to the failure kinds the SessionDO backs off on. */
export function mapAnthropicError(err: unknown): ObserverFailure {
  if (err instanceof ObserverFailure) return err;
  if (err instanceof APIConnectionError) return new ObserverFailure('network', `anthropic unreachable: ${err.message}`);
  if (err instanceof APIError) {
    const status = err.status ?? 0;
    const code = err.errorCode ?? '';
    // The provider's own words for it: the detailed code when there is one (a spend limit), else the error type.
    const named = code || err.type || '';
    const failCode = `${status || 'error'}${named ? ` ${named}` : ''}`;
    const message = `anthropic ${failCode}: ${err.message}`;
    if (SPEND_CODES.has(code) || status === 402) return new ObserverFailure('spend_cap', message, null, failCode);
    if (status === 429) return new ObserverFailure('rate_limit', message, retryAfterMs(err.headers), failCode);
    if (status === 529 || err.type === 'overloaded_error')
      return new ObserverFailure('overloaded', message, retryAfterMs(err.headers), failCode);
    if (status === 401 || status === 403) return new ObserverFailure('auth', message, null, failCode);
    // 404 names no event: the model or endpoint is wrong, and every event would fail the same way.
    if (status === 404) return new ObserverFailure('config', message, null, failCode);
    if (status === 400 || status === 413 || status === 422)
      return new ObserverFailure('bad_request', message, null, failCode);
    if (status === 408 || status === 409 || status >= 500)
      return new ObserverFailure('server', message, retryAfterMs(err.headers), failCode);
    return new ObserverFailure('bad_request', message, null, failCode);
  }
  const message = err instanceof Error ? err.message : String(err);
  return new ObserverFailure('network', `anthropic call failed: ${message}`);
}

/**
 * History as content blocks. The second cache breakpoint goes on the last message before the new user
 * turn: everything up to there is identical next time, so only the new batch is billed at full price.
 */
export function toMessageParams(messages: ChatMessage[]): MessageParam[] {
  const stableEnd = messages.length - 2;
  return messages.map((m, i): MessageParam => {
    const block: TextBlockParam = { type: 'text', text: m.content };
    if (i === stableEnd) block.cache_control = { type: 'ephemeral' };
    return { role: m.role, content: [block] };
  });
}

export function createAnthropicProvider(options: AnthropicOptions): ObserverProvider {
  const model = options.model || DEFAULT_ANTHROPIC_MODEL;
  // Retries belong to the SessionDO's alarm schedule, not to a request that holds the turn open.
  const client =
    options.client ??
    new MessagesClient({
      apiKey: options.apiKey,
      baseURL: options.baseURL || undefined,
      maxRetries: 0,
      timeout: options.timeoutMs ?? 120_000,
      // A subrequest of the turn that calls it (src/db/meter.ts).
      fetch: meteredFetch,
    });

  return {
    name: 'anthropic',
    model,
    async complete(request: ObserverRequest): Promise<ObserverReply> {
      let message;
      const asked = request.model ?? model;
      try {
        // No temperature/top_p/top_k: API version 2026-10-21 rejects them. Thinking off: compression needs none.
        message = await client.messages.create({
          model: asked,
          max_tokens: request.maxTokens,
          system: [{ type: 'text', text: request.system, cache_control: { type: 'ephemeral' } }],
          messages: toMessageParams(request.messages),
          thinking: { type: 'disabled' },
        });
      } catch (err) {
        throw mapAnthropicError(err);
      }
      // A safety refusal is a content outcome, not an error: treat it as "nothing to record".
      const text =
        message.stop_reason === 'refusal'
          ? ''
          : message.content
              .filter((b): b is Extract<typeof b, { type: 'text' }> => b.type === 'text')
              .map((b) => b.text)
              .join('');
      const usage = message.usage;
      return {
        text,
        model: message.model || asked,
        usage: {
          inputTokens: usage?.input_tokens ?? 0,
          outputTokens: usage?.output_tokens ?? 0,
          cacheReadTokens: usage?.cache_read_input_tokens ?? 0,
          cacheWriteTokens: usage?.cache_creation_input_tokens ?? 0,
        },
      };
    },
  };
}
