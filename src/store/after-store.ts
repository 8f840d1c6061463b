// What happens after a turn is committed (vector upsert, live notification): off the critical path, never
// able to lose or fail the stored rows.
import type { CairnEnv } from '../env';
import { notifyStored } from '../live/notify';
import type { StoredTurn } from './turn-store';

export interface AfterStore {
  /** Called once per committed turn that inserted something. Must not throw; failures are only logged. */
  run(stored: StoredTurn): Promise<void>;
}

export type IndexObservations = (env: CairnEnv, teamId: number, ids: number[]) => Promise<unknown>;

/** Runs each step independently so that one failing (e.g. the embedder) does not skip the others. */
export function defaultAfterStore(env: CairnEnv, indexObservations: IndexObservations | null): AfterStore {
  return {
    async run(stored) {
      const steps: Promise<unknown>[] = [];
      if (indexObservations && stored.observationIds.length) steps.push(indexObservations(env, stored.teamId, stored.observationIds));
      if (stored.notices.length) steps.push(notifyStored(env, stored.teamId, stored.notices));
      const results = await Promise.allSettled(steps);
      for (const r of results) {
        if (r.status === 'rejected') {
          console.warn('after-store step failed', { teamId: stored.teamId, ids: stored.observationIds, message: String((r.reason as Error)?.message ?? r.reason) });
        }
      }
    },
  };
}
