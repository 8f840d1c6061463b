// A work counter for the hand-written scanners in src/shared/ (tag stripping, the glob automaton): how many
// characters they examine, counted through the string primitives they scan with. `indexOf` counts the
// characters it passed over, `charCodeAt` one each. Counts, not time: a linear scanner examines a fixed number
// of characters per character of its input at any length and on any machine, a quadratic one a number that
// grows with the length. (Regular expressions are counted by hooks-client/test/backtrack-budget.ts.)

export interface ScanCount<T> {
  value: T;
  /** Characters examined through indexOf and charCodeAt while `fn` ran. */
  work: number;
}

/** Runs `fn` with String.prototype.indexOf and charCodeAt counted. Synchronous only: both are back before this returns. */
export function countScans<T>(fn: () => T): ScanCount<T> {
  const proto = String.prototype;
  const { indexOf, charCodeAt } = proto;
  let work = 0;
  proto.indexOf = function (this: string, search: string, position?: number): number {
    const from = Math.min(Math.max(Math.trunc(position ?? 0), 0), this.length);
    const at = indexOf.call(this, search, position);
    work += (at < 0 ? this.length : at + search.length) - from;
    return at;
  };
  proto.charCodeAt = function (this: string, index: number): number {
    work++;
    return charCodeAt.call(this, index);
  };
  try {
    const value = fn();
    return { value, work };
  } finally {
    proto.indexOf = indexOf;
    proto.charCodeAt = charCodeAt;
  }
}
