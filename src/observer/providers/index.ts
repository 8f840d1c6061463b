// Picks the observer provider from the environment: OBSERVER_PROVIDER, else anthropic with a key, else heuristic.
import type { CairnEnv } from '../../env';
import type { ObserverProvider } from '../types';
import { createAnthropicProvider } from './anthropic';
import { createHeuristicProvider } from './heuristic';
import { createOpenAiProvider } from './openai';
import { createWorkersAiProvider } from './workers-ai';

export type ProviderName = ObserverProvider['name'];

/** The provider the settings ask for; one whose requirements are missing falls back to the heuristic one. */
export function selectProviderName(env: Pick<CairnEnv, 'OBSERVER_PROVIDER' | 'ANTHROPIC_API_KEY' | 'OPENAI_API_KEY' | 'OPENAI_BASE_URL' | 'AI'>): ProviderName {
  const wanted = (env.OBSERVER_PROVIDER ?? '').trim().toLowerCase();
  switch (wanted) {
    case 'anthropic':
      return env.ANTHROPIC_API_KEY ? 'anthropic' : 'heuristic';
    case 'openai':
      return env.OPENAI_BASE_URL ? 'openai' : 'heuristic';
    case 'workers-ai':
      return env.AI ? 'workers-ai' : 'heuristic';
    case 'heuristic':
      return 'heuristic';
    default:
      return env.ANTHROPIC_API_KEY ? 'anthropic' : 'heuristic';
  }
}

export function createProvider(env: CairnEnv): ObserverProvider {
  const model = env.OBSERVER_MODEL?.trim() || undefined;
  switch (selectProviderName(env)) {
    case 'anthropic':
      return createAnthropicProvider({ apiKey: env.ANTHROPIC_API_KEY!, baseURL: env.ANTHROPIC_BASE_URL, model });
    case 'openai':
      return createOpenAiProvider({ apiKey: env.OPENAI_API_KEY ?? '', baseURL: env.OPENAI_BASE_URL!, model });
    case 'workers-ai':
      return createWorkersAiProvider(env.AI as unknown as { run(model: string, inputs: Record<string, unknown>): Promise<unknown> }, model);
    default:
      return createHeuristicProvider();
  }
}
