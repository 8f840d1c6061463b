// Types for metrics.mjs (shared by the workerd test and the Node report script).
export interface Run {
  expected: string[];
  ranked: string[];
}
export interface Summary {
  queries: number;
  recall5: number;
  recall10: number;
  mrr: number;
}
export function recallAt(ranked: string[], expected: string[], k: number): number;
export function reciprocalRank(ranked: string[], expected: string[]): number;
export function summarise(runs: Run[]): Summary;
