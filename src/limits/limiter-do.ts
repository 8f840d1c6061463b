// LimiterDO: one per token; counts requests per bucket (ingest, read) in fixed one-minute windows.
// Counters live in memory: if the object is evicted the window restarts, which only errs towards allowing.
import { DurableObject } from 'cloudflare:workers';
import { countedStub, meterDurableObject } from '../db/meter-bindings';
import type { CairnEnv } from '../env';
import { take, type Verdict, type Window } from './window';

export type Bucket = 'ingest' | 'read';

export const WINDOW_MS = 60_000;

export class LimiterDO extends DurableObject<CairnEnv> {
  #windows = new Map<Bucket, Window>();

  /** `cost` > 1 charges several units of work at once (the extra calls of a JSON-RPC batch), all or nothing. */
  async hit(bucket: Bucket, limit: number, now: number = Date.now(), cost = 1): Promise<Verdict> {
    const { window, verdict } = take(this.#windows.get(bucket), now, limit, WINDOW_MS, cost);
    this.#windows.set(bucket, window);
    return verdict;
  }

  async ping(): Promise<string> {
    return 'ok';
  }
}

// Every RPC method is an invocation of its own, counted (src/db/meter.ts).
meterDurableObject(LimiterDO, 'limiter');

/** The token's limiter, typed: the one place the LIMITERS binding meets this class. */
export function limiterStub(env: Pick<CairnEnv, 'LIMITERS'>, tokenId: number): DurableObjectStub<LimiterDO> {
  const ns = env.LIMITERS;
  return countedStub(ns.get(ns.idFromName(`token:${tokenId}`)), 'limiter');
}
