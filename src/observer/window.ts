// How much an observer model reads and writes in one call, per provider and model, and how many tokens a text
// may take. Pure: the conversation (conversation.ts) cuts its history to fit what this says.
import type { ObserverProvider } from './types';

export interface ModelWindow {
  /** Tokens the model takes in one call: the prompt and the reply together. */
  contextTokens: number;
  /** Tokens a reply may use (`max_tokens`): held back from the prompt. */
  outputTokens: number;
}

type ProviderName = ObserverProvider['name'];

/**
 * Models whose window we know, from their providers' model pages. A reply of 20 observations and a summary
 * takes about 3,000 tokens, so 4,096 is room enough where the window is small.
 */
const KNOWN: { provider: ProviderName; model: RegExp; window: ModelWindow }[] = [
  // developers.cloudflare.com/workers-ai/models/llama-3.3-70b-instruct-fp8-fast: "Context Window 24,000 tokens".
  {
    provider: 'workers-ai',
    model: /^@cf\/meta\/llama-3\.3-70b-instruct-fp8-fast$/,
    window: { contextTokens: 24_000, outputTokens: 4_096 },
  },
  { provider: 'anthropic', model: /^claude-/, window: { contextTokens: 200_000, outputTokens: 8_192 } },
];

/**
 * A model we do not know gets its provider's cautious default: Workers AI models as small as the default
 * model's, OpenAI-compatible servers (often local models) 32k. OBSERVER_CONTEXT_TOKENS states the real one.
 */
const FALLBACK: Record<ProviderName, ModelWindow> = {
  anthropic: { contextTokens: 200_000, outputTokens: 8_192 },
  openai: { contextTokens: 32_768, outputTokens: 8_192 },
  'workers-ai': { contextTokens: 24_000, outputTokens: 4_096 },
  heuristic: { contextTokens: Number.MAX_SAFE_INTEGER, outputTokens: 8_192 },
};

/** The window of `model` on `provider`; `contextTokens` (the deployment's OBSERVER_CONTEXT_TOKENS) overrides it. */
export function windowOf(provider: ProviderName, model: string, contextTokens?: number): ModelWindow {
  const known = KNOWN.find((k) => k.provider === provider && k.model.test(model))?.window ?? FALLBACK[provider];
  if (contextTokens === undefined) return known;
  // A reply keeps at most a quarter of a stated window, so a small local model still has room to read.
  return { contextTokens, outputTokens: Math.min(known.outputTokens, Math.floor(contextTokens / 4)) };
}

/**
 * The window every call of a provider fits: with a model for read-only turns (model-choice.ts), the smaller
 * of the two, since either may be asked.
 */
export function providerWindow(
  provider: Pick<ObserverProvider, 'name' | 'model' | 'readOnlyModel'>,
  contextTokens?: number,
): ModelWindow {
  const main = windowOf(provider.name, provider.model, contextTokens);
  if (!provider.readOnlyModel) return main;
  const other = windowOf(provider.name, provider.readOnlyModel, contextTokens);
  return other.contextTokens - other.outputTokens < main.contextTokens - main.outputTokens ? other : main;
}

export { estimateTokens } from '../lib/tokens';
