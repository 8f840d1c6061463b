// The observer's corrections, as the SessionDO sees them: find the prior records a turn is shown, and store what
// the reply said about them. The implementation is a feature (src/corrections/observer.ts, which needs search's
// query builder and the supersede path) registered by the entry (src/index.ts), so this mechanism imports none.
import type { CairnEnv } from '../env';
import type { PriorQuery, PriorRecord } from './prior';

/** Whose turn it is: the session's author, team and project. */
export interface TurnOwner {
  teamId: number;
  userId: number;
  projectId: number;
}

export interface ObserverCorrections {
  /**
   * Current records of the owner's project the owner may read, related to the turn; `exclude`d ids and the rows
   * of session `sessionId` (the turn's own, already in the observer's history) left out.
   */
  related(
    env: CairnEnv,
    owner: TurnOwner,
    query: PriorQuery,
    exclude: number[],
    sessionId: number,
  ): Promise<PriorRecord[]>;
  /**
   * Stores the reply's corrections of records it was shown (`shown`): `by` is the new observation. Answers how
   * many were stored (superseded, or flagged for review when the owner may not supersede the record).
   */
  apply(
    env: CairnEnv,
    owner: TurnOwner,
    proposals: { id: number; by: number; reason: string }[],
    shown: readonly number[],
    now: number,
  ): Promise<number>;
}

let registered: ObserverCorrections | null = null;

export function registerObserverCorrections(impl: ObserverCorrections): void {
  registered = impl;
}

/** The registered implementation; null in a graph that never loaded the entry (the turn then shows nothing). */
export const observerCorrections = (): ObserverCorrections | null => registered;
