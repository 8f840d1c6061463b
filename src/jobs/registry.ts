// The job kinds this Worker runs. Kinds live with their feature (src/forget, src/transfer, …) and are listed
// once by the entry (src/index.ts `registerJobKinds`), so the job mechanism imports no feature.
import type { AnyJobKind, JobKind } from './types';

const kinds = new Map<string, AnyJobKind>();

/** Adds kinds (a name registered twice keeps the last: tests may register their own). */
export function registerJobKinds(list: readonly AnyJobKind[]): void {
  for (const k of list) kinds.set(k.name, k);
}

export const jobKind = (name: string): AnyJobKind | undefined => kinds.get(name);

export const jobKindNames = (): string[] => [...kinds.keys()].sort();

/** A kind as the registry holds it (for `startJob`'s typed parameters). */
export const asAny = <P, C>(k: JobKind<P, C>): AnyJobKind => k as unknown as AnyJobKind;
