// Where tests reach into a SessionDO's turn (set on the instance through `runInDurableObject`; instance fields
// are not methods, so none of this is reachable over RPC).
import type { ObserverProvider } from '../observer/types';
import type { AfterStore } from '../store/after-store';

/** Where a test can break a turn on purpose: `throw` fails the step, `crash` abandons the turn mid-way. */
export type FaultPoint = 'before-store' | 'after-store';

export interface SessionSeams {
  fault?: (point: FaultPoint) => 'crash' | void;
  afterStore?: AfterStore;
  provider?: ObserverProvider;
  /** The clock observer budgets and usage days are read with. */
  now?: () => number;
}

/** Thrown by a `crash` fault: the turn stops as if the object died, leaving its claims and lease. */
export class Abandoned extends Error {}
