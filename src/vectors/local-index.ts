// D1-backed vector index for local runs and tests: float32 BLOBs, brute-force cosine, scoped by team and project.
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
    const stmt = this.db.prepare(
      `INSERT INTO local_vectors (observation_id, team_id, project_id, type, embedding) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(observation_id) DO UPDATE SET team_id = excluded.team_id, project_id = excluded.project_id,
         type = excluded.type, embedding = excluded.embedding`,
    );
    await this.db.batch(records.map((r) => stmt.bind(r.id, r.teamId, r.projectId, r.type, toBlob(r.values))));
  }

  async deleteByIds(teamId: number, ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db
      .prepare('DELETE FROM local_vectors WHERE team_id = ? AND observation_id IN (SELECT value FROM json_each(?))')
      .bind(teamId, JSON.stringify(ids))
      .run();
  }

  async query(vector: number[], q: VectorQuery): Promise<VectorMatch[]> {
    const where = ['team_id = ?'];
    const params: (string | number)[] = [q.teamId];
    if (q.projectIds?.length) {
      where.push('project_id IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(q.projectIds));
    } else if (q.excludeProjectIds?.length) {
      where.push('project_id NOT IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(q.excludeProjectIds));
    }
    if (q.types?.length) {
      where.push('type IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(q.types));
    }
    const { results } = await this.db
      // Pick the newest ids first (index only), then read just those rows: sorting with the vectors attached
      // made SQLite hex-encode every vector of the team before the LIMIT applied.
      .prepare(
        `SELECT observation_id AS id, hex(embedding) AS hex FROM local_vectors WHERE observation_id IN
           (SELECT observation_id FROM local_vectors WHERE ${where.join(' AND ')} ORDER BY observation_id DESC LIMIT ?)`,
      )
      .bind(...params, this.scanLimit)
      .all<{ id: number; hex: string }>();
    const scored = scoreHexRows(vector, results);
    scored.sort((a, b) => b.score - a.score);
    return scored.slice(0, q.topK);
  }
}
