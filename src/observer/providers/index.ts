// Picks the observer provider from the environment (OBSERVER_PROVIDER, else anthropic with a key, else heuristic).
import type { CairnEnv } from '../../env';
import type { ObserverProvider } from '../types';

export function createProvider(_env: CairnEnv): ObserverProvider {
  throw new Error('not implemented yet');
}
