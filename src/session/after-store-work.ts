// The work after a stored turn (its rows' vectors, the live notice), run off the turn's path through waitUntil
// and written down first in the buffer (`after_store`), so that work cut off with its instance (a deploy, an
// eviction, waitUntil's limit) is run again by the next instance instead of leaving rows unembedded.
import type { CairnEnv } from '../env';
import { errorText, log } from '../lib/log';
import { defaultAfterStore } from '../store/after-store';
import type { StoredTurn } from '../store/turn-store';
import { indexTurn } from '../vectors/index-records';
import type { EventBuffer } from './buffer';
import type { SessionSeams } from './seams';
import type { AfterStoreWork } from './types';

export interface AfterStoreDeps {
  env: CairnEnv;
  buffer: () => EventBuffer;
  seams: () => SessionSeams;
  waitUntil: (work: Promise<unknown>) => void;
}

export class AfterStoreRunner {
  /** Ids of after-store rows this instance is running: any other row was left by an instance that died. */
  readonly #running = new Set<number>();

  constructor(private readonly deps: AfterStoreDeps) {}

  /** Notes the turn's work (synchronously: call it in the step that confirms the turn), then starts it. */
  start(stored: StoredTurn): void {
    if (!stored.observationIds.length && stored.summaryId === null) return;
    const work: AfterStoreWork = {
      teamId: stored.teamId,
      observationIds: stored.observationIds,
      summaryId: stored.summaryId,
      prompt: stored.prompt,
    };
    this.#run(this.deps.buffer().addAfterStore(work, Date.now()), stored);
  }

  /** Runs again the work an earlier instance left unfinished (its rows are indexed again; notices are not resent). */
  resume(): number {
    let n = 0;
    for (const { id, stored } of this.deps.buffer().afterStoreLeft()) {
      if (this.#running.has(id)) continue;
      this.#run(id, { ...stored, duplicates: 0, notices: [] });
      n++;
    }
    return n;
  }

  #run(id: number, stored: StoredTurn): void {
    this.#running.add(id);
    const after = this.deps.seams().afterStore ?? defaultAfterStore(this.deps.env, indexTurn);
    const work = after
      .run(stored)
      .catch((err: unknown) => log('warn', 'after-store failed', { message: errorText(err) }))
      // Done whether it indexed or logged a failure (rows left unembedded are the backfill's): only work that
      // never got to finish is run again.
      .then(() => this.deps.buffer().afterStoreDone(id))
      .finally(() => this.#running.delete(id));
    this.deps.waitUntil(work);
  }
}
