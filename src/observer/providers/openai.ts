// Observer provider on any OpenAI-compatible chat-completions endpoint, over plain fetch.
import { meteredFetch } from '../../db/meter-bindings';
import {
  ObserverFailure,
  type ObserverProvider,
  type ObserverReply,
  type ObserverRequest,
  type ObserverUsage,
} from '../types';
import { retryAfterMs } from './anthropic';

export const DEFAULT_OPENAI_MODEL = 'gpt-4o-mini';

export interface OpenAiOptions {
  apiKey: string;
  baseURL: string;
  model?: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

interface ChatCompletion {
  model?: string;
  choices?: { message?: { content?: string | null; refusal?: string | null } }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } };
}

interface ErrorBody {
  error?: { type?: string; code?: string | null; message?: string } | string;
}

const QUOTA_CODES = new Set(['insufficient_quota', 'billing_hard_limit_reached', 'enforced_spend_limit_reached']);

/** Same failure kinds as the Anthropic adapter, read from the status, headers and error body. */
export function mapOpenAiError(status: number, headers: Headers, body: ErrorBody | null): ObserverFailure {
  const err = typeof body?.error === 'object' ? body.error : undefined;
  const code = err?.code ?? err?.type ?? '';
  const failCode = `${status}${code ? ` ${code}` : ''}`;
  const message = `openai-compatible ${failCode}: ${err?.message ?? (typeof body?.error === 'string' ? body.error : 'request failed')}`;
  if (QUOTA_CODES.has(code) || status === 402) return new ObserverFailure('spend_cap', message, null, failCode);
  if (status === 429) return new ObserverFailure('rate_limit', message, retryAfterMs(headers), failCode);
  if (status === 529 || status === 503 || code === 'overloaded_error')
    return new ObserverFailure('overloaded', message, retryAfterMs(headers), failCode);
  if (status === 401 || status === 403) return new ObserverFailure('auth', message, null, failCode);
  if (status >= 500 || status === 408 || status === 409)
    return new ObserverFailure('server', message, retryAfterMs(headers), failCode);
  if (status === 404) return new ObserverFailure('config', message, null, failCode);
  return new ObserverFailure('bad_request', message, null, failCode);
}

export function createOpenAiProvider(options: OpenAiOptions): ObserverProvider {
  const model = options.model || DEFAULT_OPENAI_MODEL;
  const url = `${options.baseURL.replace(/\/+$/, '')}/chat/completions`;
  // A subrequest of the turn that calls it (src/db/meter.ts).
  const doFetch = options.fetch ?? meteredFetch;

  return {
    name: 'openai',
    model,
    async complete(request: ObserverRequest): Promise<ObserverReply> {
      let res: Response;
      const asked = request.model ?? model;
      try {
        res = await doFetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${options.apiKey}` },
          body: JSON.stringify({
            model: asked,
            max_tokens: request.maxTokens,
            messages: [
              { role: 'system', content: request.system },
              ...request.messages.map((m) => ({ role: m.role, content: m.content })),
            ],
          }),
          signal: AbortSignal.timeout(options.timeoutMs ?? 120_000),
        });
      } catch (err) {
        throw new ObserverFailure(
          'network',
          `openai-compatible endpoint unreachable: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      const text = await res.text();
      let body: unknown = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = null;
      }
      if (!res.ok) throw mapOpenAiError(res.status, res.headers, body as ErrorBody | null);
      const completion = (body ?? {}) as ChatCompletion;
      if (!Array.isArray(completion.choices))
        throw new ObserverFailure('server', 'openai-compatible endpoint answered without choices');
      const msg = completion.choices[0]?.message;
      return {
        text: msg?.refusal ? '' : (msg?.content ?? ''),
        model: completion.model || asked,
        usage: usageOf(completion.usage),
      };
    },
  };
}

/** OpenAI counts cached prompt tokens inside prompt_tokens; ours are uncached input, like Anthropic's. */
export function usageOf(u: ChatCompletion['usage']): ObserverUsage {
  const prompt = u?.prompt_tokens ?? 0;
  const cached = Math.min(prompt, u?.prompt_tokens_details?.cached_tokens ?? 0);
  return {
    inputTokens: prompt - cached,
    outputTokens: u?.completion_tokens ?? 0,
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
  };
}
