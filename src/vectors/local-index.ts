// D1-backed vector index for local runs and tests: float32 BLOBs, brute-force cosine, scoped by team, kind and project.
import {
  deleteLocalVectors,
  localVectorFingerprints,
  localVectorGeneration,
  localVectorHex,
  upsertLocalVectors,
} from '../db/vectors';
import { collapseParts } from './keys';
import type { VectorIndex, VectorKind, VectorMatch, VectorQuery, VectorRecord } from './types';

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

/** A float32 BLOB from its SQLite hex() string (strings cross the D1 boundary far cheaper than BLOBs). */
export function decodeHex(hex: string): Float32Array {
  const bytes = new Uint8Array((hex.length >> 1) & ~3);
  for (let i = 0; i < bytes.length; i++)
    bytes[i] = (HEX[hex.charCodeAt(2 * i)]! << 4) | HEX[hex.charCodeAt(2 * i + 1)]!;
  return new Float32Array(bytes.buffer);
}

/** Cosine of `query` against each row's hex() of a float32 BLOB. */
export function scoreHexRows(query: number[], rows: { id: number; hex: string }[]): VectorMatch[] {
  return scoreVectors(
    query,
    rows.map(({ id, hex }) => ({ id, floats: decodeHex(hex) })),
  );
}

/** The database holding a team's rows (src/db/shards.ts `teamDb`), or one database for every team. */
export type TeamDatabase = D1Database | ((teamId: number) => Promise<D1Database>);

export class LocalVectorIndex implements VectorIndex {
  readonly name = 'local-d1';
  constructor(
    private readonly database: TeamDatabase,
    private readonly scanLimit = LOCAL_SCAN_LIMIT,
  ) {}

  /** A team's vectors sit beside its observations, on the team's shard. */
  #db(teamId: number): Promise<D1Database> {
    return typeof this.database === 'function' ? this.database(teamId) : Promise.resolve(this.database);
  }

  async upsert(records: VectorRecord[]): Promise<void> {
    for (const teamId of new Set(records.map((r) => r.teamId))) {
      await upsertLocalVectors(
        await this.#db(teamId),
        records
          .filter((r) => r.teamId === teamId)
          .map((r) => ({
            kind: r.kind ?? 'observation',
            recordId: r.id,
            part: r.part ?? 0,
            teamId: r.teamId,
            projectId: r.projectId,
            type: r.type,
            embedding: toBlob(r.values),
          })),
      );
    }
  }

  async deleteByIds(teamId: number, ids: number[], kind: VectorKind = 'observation'): Promise<void> {
    if (ids.length === 0) return;
    await deleteLocalVectors(await this.#db(teamId), teamId, kind, ids);
  }

  async query(pending: number[] | Promise<number[]>, q: VectorQuery): Promise<VectorMatch[]> {
    const kind = q.kind ?? 'observation';
    // The candidates do not depend on the vector: they are read while the query is still being embedded.
    const t = Date.now();
    const [vector, candidates] = await Promise.all([
      pending,
      this.#candidates(q, kind).finally(() => q.timings && (q.timings.vector_candidates = Date.now() - t)),
    ]);
    const scoring = Date.now();
    // A vector of another length was written by another embedder (the local stack switched models): it is not
    // comparable, so it is skipped until the row is embedded again.
    const rows: { id: number; floats: Float32Array; vv: number }[] = [];
    for (const c of candidates) {
      const hit = decoded.get(cacheKey(kind, c.id, c.part));
      if (hit && hit.floats.length === vector.length) rows.push({ id: c.id, floats: hit.floats, vv: hit.vv });
    }
    // Under the caller's floor a neighbour is dropped anyway: dropped before ranking, most of 5,000 never sort.
    const floor = q.minScore ?? -Infinity;
    const scored = scoreVectors(vector, rows).filter((m) => m.score >= floor);
    // Parts of one record (an observation's facts) count once, at the best part's similarity.
    const matches = collapseParts(scored).slice(0, q.topK);
    if (q.timings) q.timings.vector_score = Date.now() - scoring;
    return matches;
  }

  /**
   * The newest ids with a fingerprint of each vector (its first and last 8 bytes), from the fingerprint index
   * alone; only vectors this isolate has not decoded yet (or whose fingerprint changed) are read in full.
   * Re-reading a whole team's vectors as hex was most of a team-wide query's time.
   */
  async #candidates(q: VectorQuery, kind: VectorKind): Promise<Candidate[]> {
    const db = await this.#db(q.teamId);
    const candidates = await this.#candidateList(db, q, kind);
    const missing = [
      ...new Set(candidates.filter((c) => decoded.get(cacheKey(kind, c.id, c.part))?.fp !== c.fp).map((c) => c.id)),
    ];
    for (let i = 0; i < missing.length; i += 1_000) {
      for (const r of await localVectorHex(db, kind, missing.slice(i, i + 1_000)))
        remember(cacheKey(kind, r.id, r.part), r.hex);
    }
    return candidates;
  }

  /**
   * The list as last read in this isolate while the team's counter for the kind has not moved since, else read
   * again. The counter is read first: a write after that read moves it, so a list is never kept under a count
   * older than what it saw, only newer (then it is read once more than needed).
   */
  async #candidateList(db: D1Database, q: VectorQuery, kind: VectorKind): Promise<Candidate[]> {
    const generation = await localVectorGeneration(db, q.teamId, kind);
    const key = JSON.stringify([
      q.teamId,
      kind,
      q.projectIds ?? null,
      q.excludeProjectIds ?? null,
      q.types ?? null,
      this.scanLimit,
    ]);
    let lists = candidateLists.get(db);
    if (!lists) candidateLists.set(db, (lists = new Map()));
    const kept = lists.get(key);
    if (kept && kept.generation === generation) {
      lists.delete(key);
      lists.set(key, kept); // most recently used last
      return kept.list;
    }
    const list = await localVectorFingerprints(db, { ...q, kind }, this.scanLimit);
    if (!kept && lists.size >= MAX_LISTS) lists.delete(lists.keys().next().value as string);
    lists.set(key, { generation, list });
    return list;
  }
}

type Candidate = { id: number; part: number; fp: string };

/**
 * Candidate lists per database and scope (team, kind, projects, types), with the counter they were read at:
 * reading 5,000 ids and fingerprints was a third of a team-wide hybrid query, and between writes the list is the
 * same. Per database object, since two shards count independently.
 */
const candidateLists = new WeakMap<D1Database, Map<string, { generation: number; list: Candidate[] }>>();
const MAX_LISTS = 64;

/**
 * Vectors this isolate has decoded, by kind, record id and part (ids are never reused), each with its
 * fingerprint and squared norm. Two shards number their rows independently, so the same key can name two
 * vectors: the fingerprint differs, and the vector is then read again.
 */
const decoded = new Map<number, { fp: string; floats: Float32Array; vv: number }>();
const MAX_DECODED = 40_000;
const KIND_CODE: Record<VectorKind, number> = { observation: 0, summary: 1, prompt: 2 };
/**
 * One number per kind, id and part (number keys hash faster than the strings they replaced: 10,000 lookups a
 * team-wide query). Parts stay below 16 (MAX_FACT_VECTORS + 1); a larger one, never written by cairn, would
 * share a key, so it gets a key no other vector has (NaN is never found) and is read but not scored.
 */
const cacheKey = (kind: VectorKind, id: number, part: number) =>
  part < 16 ? (id * 16 + part) * 4 + KIND_CODE[kind] : Number.NaN;

function remember(key: number, hex: string): void {
  // Maps iterate in insertion order: dropping the first key evicts the oldest entry.
  if (Number.isNaN(key)) return;
  if (decoded.size >= MAX_DECODED) decoded.delete(decoded.keys().next().value as number);
  const floats = decodeHex(hex);
  decoded.set(key, { fp: hex.slice(0, 16) + hex.slice(-16), floats, vv: squaredNorm(floats, floats.length) });
}

/** Σ v² over the first `n` entries, summed in index order (so a stored norm equals one computed while scoring). */
function squaredNorm(v: ArrayLike<number>, n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += v[i]! * v[i]!;
  return s;
}

/**
 * Cosine of `query` against decoded vectors; the query's norm is computed once, and a row's stored `vv` (its
 * squared norm over the same entries) is used instead of summing it again: the same number either way.
 */
export function scoreVectors(
  query: number[],
  rows: { id: number; floats: Float32Array; vv?: number }[],
): VectorMatch[] {
  // A typed copy and four running sums: the 5,000 × 512 products of a team-wide query take about 40 % less
  // time than one sum over the plain array (the same products; the sums differ only in rounding).
  const qv = Float64Array.from(query);
  const qq = squaredNorm(qv, qv.length);
  return rows.map(({ id, floats, vv: stored }) => {
    const n = Math.min(qv.length, floats.length);
    let d0 = 0;
    let d1 = 0;
    let d2 = 0;
    let d3 = 0;
    let i = 0;
    for (; i + 3 < n; i += 4) {
      d0 += qv[i]! * floats[i]!;
      d1 += qv[i + 1]! * floats[i + 1]!;
      d2 += qv[i + 2]! * floats[i + 2]!;
      d3 += qv[i + 3]! * floats[i + 3]!;
    }
    for (; i < n; i++) d0 += qv[i]! * floats[i]!;
    const dot = d0 + d1 + d2 + d3;
    const vv = stored !== undefined && n === floats.length ? stored : squaredNorm(floats, n);
    return { id, score: qq && vv ? dot / Math.sqrt(qq * vv) : 0 };
  });
}
