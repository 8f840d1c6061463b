// How the default search weighs its channels. Keyword ranks count 1; a vector channel counts what its embedder
// has earned on public retrieval sets (BENCHMARKS.md, "Retrieval quality"), never more than keyword.

export const SEARCH_CONFIG = {
  /** RRF damping: larger flattens the difference between neighbouring ranks. */
  rrfK: 60,
  keywordWeight: 1,
  /**
   * Vector weight per embedder name. The offline embedder (hashed words + a small thesaurus) lowered recall on
   * every public set at every weight we tried, so locally the default is keyword search; its vectors are still
   * written so that indexing, forgetting and backfill run the production code path. bge-m3 cannot run here:
   * its weight is a prior (half of keyword), kept safe by `pinExact` and its similarity floor.
   */
  vectorWeights: { 'workers-ai-bge-m3': 0.5, 'local-hashed-ngrams': 0, 'local-use-lite': 0.3 } as Readonly<
    Record<string, number>
  >,
  /**
   * How an embedder's list is fused with keyword search: `rrf` (by rank) unless listed here as `score`
   * (normalised scores, so how similar a neighbour is counts, not only its place). The local sentence model
   * (Universal Sentence Encoder lite) helps only by score: on REALTALK every RRF weight we tried lowered R@10
   * (0.562 → 0.553 at weight 0.5), score fusion at weight 0.3 raised it (→ 0.577) without costing the
   * release-notes set (BENCHMARKS.md, "Retrieval quality").
   */
  fusionMethods: { 'local-use-lite': 'score' } as Readonly<Record<string, 'rrf' | 'score'>>,
  /** Embedders not listed above (injected ones): counted like bge-m3. */
  otherVectorWeight: 0.5,
  /** The first keyword hits that match every query term keep their places whatever the vectors say. */
  pinExact: 3,
} as const;

/**
 * The weight of an embedder's neighbours in the default search. `override` (the CAIRN_VECTOR_WEIGHT var, for
 * benchmark sweeps) replaces the configured value when it is a number from 0 to 1.
 */
export function fusionMethodFor(embedderName: string): 'rrf' | 'score' {
  return SEARCH_CONFIG.fusionMethods[embedderName] ?? 'rrf';
}

export function vectorWeightFor(embedderName: string, override?: string): number {
  const o = override === undefined || override.trim() === '' ? NaN : Number(override);
  if (Number.isFinite(o) && o >= 0 && o <= 1) return o;
  return SEARCH_CONFIG.vectorWeights[embedderName] ?? SEARCH_CONFIG.otherVectorWeight;
}
