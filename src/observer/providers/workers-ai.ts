// Observer provider on Workers AI (env.AI): no extra key on Cloudflare.
import { ObserverFailure, type ObserverProvider, type ObserverReply, type ObserverRequest } from '../types';

export const DEFAULT_WORKERS_AI_MODEL = '@cf/meta/llama-3.3-70b-instruct-fp8-fast';

/** The one method we use, so tests can spy on it and nothing else of the binding leaks in. */
export interface AiRunner {
  run(model: string, inputs: Record<string, unknown>): Promise<unknown>;
}

/** Workers AI reports failures as thrown errors whose text carries a code; map them to our kinds. */
export function mapWorkersAiError(err: unknown): ObserverFailure {
  if (err instanceof ObserverFailure) return err;
  const message = `workers-ai: ${err instanceof Error ? err.message : String(err)}`;
  const text = message.toLowerCase();
  if (/neuron|allocation|quota|billing/.test(text)) return new ObserverFailure('spend_cap', message);
  if (/\b429\b|rate limit|too many requests/.test(text)) return new ObserverFailure('rate_limit', message);
  if (/capacity|overloaded|\b3040\b/.test(text)) return new ObserverFailure('overloaded', message);
  if (/\b40[13]\b|unauthori[sz]ed|forbidden|authentication/.test(text)) return new ObserverFailure('auth', message);
  if (/\b400\b|invalid input|bad input|\b5006\b/.test(text)) return new ObserverFailure('bad_request', message);
  if (/network|fetch failed|connection/.test(text)) return new ObserverFailure('network', message);
  return new ObserverFailure('server', message);
}

function textOf(result: unknown): string {
  if (typeof result === 'string') return result;
  if (typeof result !== 'object' || result === null) return '';
  const r = result as { response?: unknown; choices?: { message?: { content?: unknown } }[] };
  if (typeof r.response === 'string') return r.response;
  // Some newer models answer in the chat-completions shape.
  const content = r.choices?.[0]?.message?.content;
  return typeof content === 'string' ? content : '';
}

export function createWorkersAiProvider(ai: AiRunner, model = DEFAULT_WORKERS_AI_MODEL): ObserverProvider {
  return {
    name: 'workers-ai',
    model,
    async complete(request: ObserverRequest): Promise<ObserverReply> {
      let result: unknown;
      const asked = request.model ?? model;
      try {
        result = await ai.run(asked, {
          messages: [{ role: 'system', content: request.system }, ...request.messages],
          max_tokens: request.maxTokens,
        });
      } catch (err) {
        throw mapWorkersAiError(err);
      }
      const usage = (result as { usage?: { prompt_tokens?: number; completion_tokens?: number } } | null)?.usage;
      return {
        text: textOf(result),
        model: asked,
        usage: {
          inputTokens: usage?.prompt_tokens ?? 0,
          outputTokens: usage?.completion_tokens ?? 0,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
        },
      };
    },
  };
}
