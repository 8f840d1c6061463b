// What happens after a turn is committed (vector upsert, live notification): off the critical path, never
// able to lose or fail the stored rows.
import type { CairnEnv } from '../env';
import { notifyStored } from '../live/notify';
import type { StoredTurn } from './turn-store';
import { errorText, log } from '../lib/log';

export interface AfterStore {
  /** Called once per committed turn that inserted something. Must not throw; failures are only logged. */
  run(stored: StoredTurn): Promise<void>;
}

/** Embeds what a turn stored: its observations, its summary and the prompt it was filed under. */
export type IndexTurn = (env: CairnEnv, stored: StoredTurn) => Promise<unknown>;

/** Runs each step independently so that one failing (e.g. the embedder) does not skip the others. */
export function defaultAfterStore(env: CairnEnv, indexTurn: IndexTurn | null): AfterStore {
  return {
    async run(stored) {
      const steps: Promise<unknown>[] = [];
      if (indexTurn && (stored.observationIds.length || stored.summaryId !== null)) steps.push(indexTurn(env, stored));
      if (stored.notices.length) steps.push(notifyStored(env, stored.teamId, stored.notices));
      const results = await Promise.allSettled(steps);
      for (const r of results) {
        if (r.status === 'rejected') {
          log('warn', 'after-store step failed', {
            team_id: stored.teamId,
            ids: stored.observationIds,
            message: errorText(r.reason),
          });
        }
      }
    },
  };
}
