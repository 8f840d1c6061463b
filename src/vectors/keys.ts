// What each vector embeds, and how that is written as a Vectorize id: one scheme for every index.
//
//   observation 17, its main text   "17"      (the only id before facts were embedded: existing vectors keep it)
//   observation 17, its 3rd fact    "17.f3"
//   session summary 17              "s17"
//   user prompt 17                  "p17"
//
// A team on a shard other than `DB` gets the shard's name in front ("DB_1:17.f3", src/db/shards.ts
// `vectorIdPrefix`). The longest id, "DB_99:s" + 15 digits, stays far under Vectorize's 64 bytes.

export type VectorKind = 'observation' | 'summary' | 'prompt';
export const VECTOR_KINDS: readonly VectorKind[] = ['observation', 'summary', 'prompt'];

/**
 * Facts embedded on their own per observation. Vectorize deletes only by id (no prefix, no filter), and a row is
 * often gone from D1 before its vectors are dropped (forget, retention, a move), so every id an observation can
 * have must be nameable from its row id alone: a fixed cap makes that 1 + 8 ids. Eight covers what the observer
 * writes (its prompt shows three facts; the own retrieval set has at most two), bounds the embedding texts a
 * turn sends, and keeps one talkative observation from filling a query's top 100 with its own parts.
 */
export const MAX_FACT_VECTORS = 8;

/** Part 0 is an observation's main text (and the whole of a summary or prompt); part i ≥ 1 is its i-th fact. */
export interface VectorKey {
  kind: VectorKind;
  id: number;
  part: number;
}

const TAG: Record<VectorKind, string> = { observation: '', summary: 's', prompt: 'p' };

/** The id of `key` under a team's shard prefix. */
export function vectorIdOf(prefix: string, key: VectorKey): string {
  const fact = key.kind === 'observation' && key.part > 0 ? `.f${key.part}` : '';
  return `${prefix}${TAG[key.kind]}${key.id}${fact}`;
}

const ID = /^(s|p)?(\d{1,15})(?:\.f([1-9]\d?))?$/;

/** Reads an id back; null for another shard's ids, malformed ones, and fact parts of summaries or prompts. */
export function parseVectorId(prefix: string, raw: string): VectorKey | null {
  if (!raw.startsWith(prefix)) return null;
  const m = ID.exec(raw.slice(prefix.length));
  if (!m) return null;
  const kind: VectorKind = m[1] === 's' ? 'summary' : m[1] === 'p' ? 'prompt' : 'observation';
  const id = Number(m[2]);
  const part = m[3] === undefined ? 0 : Number(m[3]);
  if (!Number.isSafeInteger(id) || part > MAX_FACT_VECTORS || (kind !== 'observation' && part > 0)) return null;
  return { kind, id, part };
}

/** Every id a record's vectors can have: what forgetting it must delete. */
export function allVectorIds(prefix: string, kind: VectorKind, id: number): string[] {
  const parts = kind === 'observation' ? MAX_FACT_VECTORS + 1 : 1;
  return Array.from({ length: parts }, (_, part) => vectorIdOf(prefix, { kind, id, part }));
}

/**
 * One hit per record, at its best part's similarity, best first: an observation found by two of its facts ranks
 * once, as itself. Ties keep the order the index answered in.
 */
export function collapseParts(matches: readonly { id: number; score: number }[]): { id: number; score: number }[] {
  const best = new Map<number, number>();
  for (const m of matches) if (!((best.get(m.id) ?? -Infinity) >= m.score)) best.set(m.id, m.score);
  return [...best.entries()].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score);
}
