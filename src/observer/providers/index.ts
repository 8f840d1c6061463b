// Picks the observer provider from the environment: OBSERVER_PROVIDER, else anthropic with a key, else heuristic.
import { configOf, type ConfigInput } from '../../config';
import { counted } from '../../db/meter-bindings';
import type { CairnEnv } from '../../env';
import { withReadOnlyModel } from '../model-choice';
import type { ObserverProvider } from '../types';
import { createAnthropicProvider } from './anthropic';
import { createHeuristicProvider } from './heuristic';
import { createOpenAiProvider } from './openai';
import { createWorkersAiProvider } from './workers-ai';

export type ProviderName = ObserverProvider['name'];

/** The provider the settings ask for; one whose requirements are missing falls back to the heuristic one. */
export function selectProviderName(env: ConfigInput & Pick<CairnEnv, 'AI'>): ProviderName {
  const { provider, anthropic, openai } = configOf(env).observer;
  switch (provider) {
    case 'anthropic':
      return anthropic.apiKey ? 'anthropic' : 'heuristic';
    case 'openai':
      return openai.baseURL ? 'openai' : 'heuristic';
    case 'workers-ai':
      return env.AI ? 'workers-ai' : 'heuristic';
    case 'heuristic':
      return 'heuristic';
    default:
      return anthropic.apiKey ? 'anthropic' : 'heuristic';
  }
}

/** The configured provider; with OBSERVER_READONLY_MODEL set, read-only turns ask that model. */
export function createProvider(env: CairnEnv): ObserverProvider {
  return withReadOnlyModel(createBaseProvider(env), configOf(env).observer.readOnlyModel);
}

function createBaseProvider(env: CairnEnv): ObserverProvider {
  const { model, anthropic, openai } = configOf(env).observer;
  switch (selectProviderName(env)) {
    case 'anthropic':
      return createAnthropicProvider({ apiKey: anthropic.apiKey ?? '', baseURL: anthropic.baseURL, model });
    case 'openai':
      return createOpenAiProvider({ apiKey: openai.apiKey ?? '', baseURL: openai.baseURL ?? '', model });
    case 'workers-ai':
      return createWorkersAiProvider(
        counted(env.AI!, 'ai') as unknown as { run(model: string, inputs: Record<string, unknown>): Promise<unknown> },
        model,
      );
    default:
      return createHeuristicProvider();
  }
}
