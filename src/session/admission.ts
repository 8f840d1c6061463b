// Ingest admission in the SessionDO: the per-minute ingest limit is counted where the events already go, so
// an event costs one Durable Object round trip instead of a rate-limiter call followed by the session call.
// One call (a single event, or all of one session's events in a batch replay) counts as one request, the way
// the per-token limiter counted one HTTP request. Counters live in memory: an evicted object restarts its
// window, which only errs towards allowing.
import { take, type Verdict, type Window } from '../limits/window';
import type { EnqueueResult } from './types';

export const INGEST_WINDOW_MS = 60_000;

/** What `SessionDO.admit` answers: the limiter's verdict, and each event's result when it was let in. */
export interface Admission {
  verdict: Verdict;
  /** In the order sent; empty when the call was refused by the limit. */
  results: EnqueueResult[];
}

/** The session's ingest window; `now` is passed in. */
export class IngestGate {
  #window: Window | undefined;

  /** Counts one call against `limit` per minute; a refused call is not counted. */
  take(now: number, limit: number): Verdict {
    const { window, verdict } = take(this.#window, now, limit, INGEST_WINDOW_MS);
    this.#window = window;
    return verdict;
  }
}
