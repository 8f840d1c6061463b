// The two seams of semantic search: where vectors live (VectorIndex) and how text becomes one (Embedder).

/** One observation's vector with the metadata the index filters on. */
export interface VectorRecord {
  id: number;
  teamId: number;
  projectId: number;
  type: string;
  values: number[];
}

export interface VectorQuery {
  teamId: number;
  /** Restrict to these projects; omit for the whole team (the caller still re-checks visibility in D1). */
  projectIds?: number[];
  /**
   * Leave out these projects (other users' private ones) so they cannot crowd the caller's neighbours out
   * of the top K, which would hint that they exist.
   */
  excludeProjectIds?: number[];
  types?: string[];
  topK: number;
}

export interface VectorMatch {
  id: number;
  /** Cosine similarity, higher is closer. */
  score: number;
}

export interface VectorIndex {
  readonly name: string;
  upsert(records: VectorRecord[]): Promise<void>;
  deleteByIds(teamId: number, ids: number[]): Promise<void>;
  query(vector: number[], q: VectorQuery): Promise<VectorMatch[]>;
}

export interface Embedder {
  readonly name: string;
  readonly dimensions: number;
  /**
   * Similarity below which a neighbour is noise rather than a match: every document has some nearest
   * neighbour, so hybrid search keeps only vector hits at or above this score.
   */
  readonly minScore: number;
  embed(texts: string[]): Promise<number[][]>;
  /** A search query's vector, where the embedder serves queries ahead of stored rows (else `embed([q])`). */
  embedQuery?(text: string): Promise<number[]>;
}

export interface VectorAdapters {
  index: VectorIndex;
  embedder: Embedder;
}
