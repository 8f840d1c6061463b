// D1-backed vector index for local runs and tests: float32 BLOBs, brute-force cosine, scoped by team and project.
import { deleteLocalVectors, localVectorCandidates, upsertLocalVectors } from '../db/vectors';
import type { VectorIndex, VectorMatch, VectorQuery, VectorRecord } from './types';

/**
 * Brute force reads every candidate row, so a query scans at most this many (newest first). Fine for a
 * project or a small team; production uses Vectorize, which has no such cap.
 */
export const LOCAL_SCAN_LIMIT = 5_000;

export function toBlob(values: number[]): ArrayBuffer {
  return new Float32Array(values).buffer;
}

const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) HEX['0123456789ABCDEF'.charCodeAt(i)] = i;

/** Cosine similarity; vectors from our embedders are unit length but stored ones may come from elsewhere. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

/**
 * Cosine of `query` against each row's hex() of a float32 BLOB (strings cross the D1 boundary far cheaper than
 * BLOBs, which arrive as arrays of numbers). One project is ~1k rows per search, so the
 * rows are decoded into one reused buffer and the query's norm is computed once, not once per row.
 */
export function scoreHexRows(query: number[], rows: { id: number; hex: string }[]): VectorMatch[] {
  let qq = 0;
  for (const x of query) qq += x * x;
  let bytes = new Uint8Array(0);
  let floats = new Float32Array(0);
  return rows.map(({ id, hex }) => {
    const len = hex.length >> 1;
    if (bytes.length !== len) {
      bytes = new Uint8Array(len & ~3);
      floats = new Float32Array(bytes.buffer);
    }
    for (let i = 0; i < bytes.length; i++) bytes[i] = (HEX[hex.charCodeAt(2 * i)]! << 4) | HEX[hex.charCodeAt(2 * i + 1)]!;
    let dot = 0;
    let vv = 0;
    const n = Math.min(query.length, floats.length);
    for (let i = 0; i < n; i++) {
      const v = floats[i]!;
      dot += query[i]! * v;
      vv += v * v;
    }
    return { id, score: qq && vv ? dot / Math.sqrt(qq * vv) : 0 };
  });
}

export class LocalVectorIndex implements VectorIndex {
  readonly name = 'local-d1';
  constructor(private readonly db: D1Database, private readonly scanLimit = LOCAL_SCAN_LIMIT) {}

  async upsert(records: VectorRecord[]): Promise<void> {
    if (records.length === 0) return;
    await upsertLocalVectors(
      this.db,
      records.map((r) => ({ observationId: r.id, teamId: r.teamId, projectId: r.projectId, type: r.type, embedding: toBlob(r.values) })),
    );
  }

  async deleteByIds(teamId: number, ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    await deleteLocalVectors(this.db, teamId, ids);
  }

  async query(vector: number[], q: VectorQuery): Promise<VectorMatch[]> {
    const results = await localVectorCandidates(this.db, q, this.scanLimit);
    const scored = scoreHexRows(vector, results);
    scored.sort((a, b) => b.score - a.score);
    return scored.slice(0, q.topK);
  }
}
