// Ingest admission in the SessionDO: the per-minute ingest limit is counted where the events already go, so
// an event costs one Durable Object round trip instead of a rate-limiter call followed by the session call.
// Every event is a unit of the limit: a single event is let in or refused; of a batch replay's events for
// this session, the first ones are let in while the window lasts and the rest refused (the client retries
// exactly those). Counters live in memory: an evicted object restarts its window, which only errs towards
// allowing.
import { take, type Verdict, type Window } from '../limits/window';
import type { EnqueueResult } from './types';

export const INGEST_WINDOW_MS = 60_000;

/** What `SessionDO.admit` answers: the limiter's verdict, and the results of the events let in. */
export interface Admission {
  verdict: Verdict;
  /** The first events of the call, in the order sent; those past them were refused by the limit. */
  results: EnqueueResult[];
  /** Set when the team is moving (SessionDO.holdForMove): nothing was taken; ms epoch to try again. */
  movingUntil?: number;
}

/** The session's ingest window; `now` is passed in. */
export class IngestGate {
  #window: Window | undefined;

  /** Lets in up to `events` events against `limit` per minute; answers how many, with the verdict. */
  take(now: number, limit: number, events: number): { verdict: Verdict; granted: number } {
    const { window, verdict, granted } = take(this.#window, now, limit, INGEST_WINDOW_MS, events, events > 1);
    this.#window = window;
    return { verdict, granted };
  }
}
