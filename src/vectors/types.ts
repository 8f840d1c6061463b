// The two seams of semantic search: where vectors live (VectorIndex) and how text becomes one (Embedder).
import type { VectorKind } from './keys';
import type { EmbedLimits } from './limits';

export type { VectorKind } from './keys';

/** One vector (a record's main text or one of an observation's facts) with the metadata the index filters on. */
export interface VectorRecord {
  /** The record's row id. */
  id: number;
  /** Default `observation`. */
  kind?: VectorKind;
  /** 0 = the record's main text (default); i ≥ 1 = an observation's i-th fact (src/vectors/keys.ts). */
  part?: number;
  teamId: number;
  projectId: number;
  /** An observation's type; a summary or prompt carries its kind. */
  type: string;
  values: number[];
}

export interface VectorQuery {
  teamId: number;
  /** Which records to search (default `observation`); each kind is a list of its own. */
  kind?: VectorKind;
  /** Restrict to these projects; omit for the whole team (the caller still re-checks visibility in D1). */
  projectIds?: number[];
  /**
   * Leave out these projects (other users' private ones) so they cannot crowd the caller's neighbours out
   * of the top K, which would hint that they exist.
   */
  excludeProjectIds?: number[];
  types?: string[];
  topK: number;
  /** Matches under this similarity are not wanted (the embedder's floor); an index may drop them before ranking. */
  minScore?: number;
  /** Filled with the index's own phase durations in ms, where it has phases (the Server-Timing header). */
  timings?: Record<string, number>;
}

/** A record found by its vectors: several parts of one record come back as one match, at the best part's score. */
export interface VectorMatch {
  id: number;
  /** Cosine similarity, higher is closer. */
  score: number;
}

export interface VectorIndex {
  readonly name: string;
  upsert(records: VectorRecord[]): Promise<void>;
  /** Deletes every vector of these records, all parts (default kind `observation`). */
  deleteByIds(teamId: number, ids: number[], kind?: VectorKind): Promise<void>;
  /**
   * The `topK` nearest in scope. The vector may still be on its way (a search passes the query's embedding as
   * it is being made): an index that first reads its candidates (the local one) reads them meanwhile.
   */
  query(vector: number[] | Promise<number[]>, q: VectorQuery): Promise<VectorMatch[]>;
}

export interface Embedder {
  readonly name: string;
  readonly dimensions: number;
  /** What one call may carry (vectors/limits.ts); absent: a hundred texts, no token bound. */
  readonly limits?: EmbedLimits;
  /**
   * Similarity below which a neighbour is noise rather than a match: every document has some nearest
   * neighbour, so hybrid search keeps only vector hits at or above this score.
   */
  readonly minScore: number;
  embed(texts: string[]): Promise<number[][]>;
  /** A search query's vector, where the embedder serves queries ahead of stored rows (else `embed([q])`). */
  embedQuery?(text: string): Promise<number[]>;
  /**
   * Where this embedder's vectors come from, for the per-isolate cache of query vectors (src/vectors/
   * query-cache.ts): the same binding object (compared by identity) and key always give the same vector for
   * the same text. Omitted, queries are embedded every time.
   */
  readonly querySource?: { binding: object; key: string };
}

export interface VectorAdapters {
  index: VectorIndex;
  embedder: Embedder;
}
