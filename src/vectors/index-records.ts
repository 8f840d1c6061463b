// Embeds stored records into the vector index (after a turn is stored, and by the backfill): each observation's
// main text and each of its facts, session summaries and user prompts (the ids: src/vectors/keys.ts).
import { markEmbedded, observationsToEmbed, promptsToEmbed, summariesToEmbed, unembeddedPrompt } from '../db/vectors';
import type { CairnEnv } from '../env';
import { jsonList } from '../lib/json-list';
import { getVectorAdapters } from './adapters';
import { MAX_FACT_VECTORS, VECTOR_KINDS } from './keys';
import { DEFAULT_EMBED_LIMITS, groupWithin, type EmbedLimits } from './limits';
import type { VectorAdapters, VectorKind, VectorRecord } from './types';
import { teamDb } from '../db/shards';
import { errorText, log } from '../lib/log';

type ObservationDoc = Awaited<ReturnType<typeof observationsToEmbed>>[number];
type SummaryDoc = Awaited<ReturnType<typeof summariesToEmbed>>[number];

const present = (s: string | null | undefined): s is string => !!s && s.trim() !== '';

/** The text we embed: what the record is about, densest parts first (models truncate from the end). */
export function embeddingText(
  o: Pick<ObservationDoc, 'title' | 'subtitle' | 'narrative' | 'facts' | 'concepts' | 'files_read' | 'files_modified'>,
): string {
  const files = [...new Set([...jsonList(o.files_modified), ...jsonList(o.files_read)])].map((f) =>
    f.split('/').slice(-2).join('/'),
  );
  return [o.title, o.subtitle, ...jsonList(o.facts), o.narrative, jsonList(o.concepts).join(', '), files.join(' ')]
    .filter(present)
    .join('\n');
}

/**
 * The facts embedded on their own, in their order: each its own vector, so a question about one of them is not
 * diluted by the rest of the record (the main text still holds them all). Blank and repeated facts are left out; at most
 * MAX_FACT_VECTORS (src/vectors/keys.ts says why).
 */
export function factTexts(facts: string): string[] {
  return [
    ...new Set(
      jsonList(facts)
        .map((f) => f.trim())
        .filter((f) => f !== ''),
    ),
  ].slice(0, MAX_FACT_VECTORS);
}

/**
 * One fact's embedding text: the fact under its observation's title. A fact alone is a short text, and a short
 * text sits near many short queries; the title says what the fact is about. On the own retrieval set (the only
 * one with facts) facts alone lost a question from the top 10 (R@10 0.898 → 0.882), under their title none
 * (0.898 → 0.898, R@5 0.874 → 0.858, BENCHMARKS.md "Index what is asked about").
 */
export function factEmbeddingText(title: string | null, fact: string): string {
  return title && title.trim() ? `${title.trim()}: ${fact}` : fact;
}

/** A session summary's text, in the order the observer writes it. */
export function summaryText(
  s: Pick<SummaryDoc, 'request' | 'investigated' | 'learned' | 'completed' | 'next_steps' | 'notes'>,
): string {
  return [s.request, s.investigated, s.learned, s.completed, s.next_steps, s.notes].filter(present).join('\n');
}

/** Records of one team to embed, by kind. */
export interface RecordIds {
  observations?: number[];
  summaries?: number[];
  prompts?: number[];
}

export interface IndexOutcome {
  /** Records embedded (an observation with its facts counts once). */
  indexed: number;
  /** Deleted records whose vectors were removed instead. */
  removed: number;
  failed: number;
}

/** Records per call, all kinds together (an observation may bring up to MAX_FACT_VECTORS more texts). */
const MAX_PER_CALL = 1000;

/**
 * Texts per embedding call, and so the vectors held at once: a chunk is embedded, upserted and marked embedded
 * before the next is asked for. bge-m3 vectors are 1,024 floats; 100 of them as JS numbers are under 1 MB.
 */
export const EMBED_CHUNK_TEXTS = 100;

const FIELD: Record<VectorKind, keyof RecordIds> = {
  observation: 'observations',
  summary: 'summaries',
  prompt: 'prompts',
};

/** One live record and the texts it is embedded as (part i = texts[i]). */
export interface LoadedRecord {
  kind: VectorKind;
  id: number;
  projectId: number;
  type: string;
  texts: string[];
}

export interface Loaded {
  records: LoadedRecord[];
  /** Deleted records (soft-deleted observations, summaries): their vectors are dropped instead. */
  gone: Record<VectorKind, number[]>;
}

/** Reads what to embed: live records become texts, deleted ones are to be dropped. */
export async function loadRecords(d: D1Database, teamId: number, ids: RecordIds): Promise<Loaded> {
  const [obs, sums, prompts] = await Promise.all([
    ids.observations?.length ? observationsToEmbed(d, teamId, ids.observations) : [],
    ids.summaries?.length ? summariesToEmbed(d, teamId, ids.summaries) : [],
    ids.prompts?.length ? promptsToEmbed(d, teamId, ids.prompts) : [],
  ]);
  const out: Loaded = { records: [], gone: { observation: [], summary: [], prompt: [] } };
  for (const o of obs) {
    if (o.deleted_at !== null) out.gone.observation.push(o.id);
    else
      out.records.push({
        kind: 'observation',
        id: o.id,
        projectId: o.project_id,
        type: o.type,
        texts: [embeddingText(o), ...factTexts(o.facts).map((f) => factEmbeddingText(o.title, f))],
      });
  }
  for (const s of sums) {
    if (s.deleted_at !== null) out.gone.summary.push(s.id);
    else
      out.records.push({
        kind: 'summary',
        id: s.id,
        projectId: s.project_id,
        type: 'summary',
        texts: [summaryText(s)].filter(present),
      });
  }
  for (const p of prompts)
    out.records.push({
      kind: 'prompt',
      id: p.id,
      projectId: p.project_id,
      type: 'prompt',
      texts: [p.text].filter(present),
    });
  return out;
}

/**
 * Records grouped so that each chunk fits one embedding call: at most EMBED_CHUNK_TEXTS texts (or the embedder's
 * own bound) and the embedder's estimated tokens (vectors/limits.ts); a record's parts stay together.
 */
export function chunkRecords(records: readonly LoadedRecord[], limits: Partial<EmbedLimits> = {}): LoadedRecord[][] {
  const within = { ...DEFAULT_EMBED_LIMITS, ...limits };
  return groupWithin(records, (r) => r.texts, { ...within, texts: Math.min(within.texts, EMBED_CHUNK_TEXTS) });
}

/** Removes the vectors of deleted records (every part). */
export async function dropGone(
  adapters: VectorAdapters,
  teamId: number,
  gone: Record<VectorKind, number[]>,
): Promise<number> {
  let removed = 0;
  for (const kind of VECTOR_KINDS) {
    if (gone[kind].length === 0) continue;
    await adapters.index.deleteByIds(teamId, gone[kind], kind);
    removed += gone[kind].length;
  }
  return removed;
}

/**
 * Embeds one chunk (one embedding call), upserts its vectors and stamps its records embedded; the vectors are
 * let go when it returns. Answers the bytes the chunk's vectors took while held.
 */
export async function embedChunk(
  adapters: VectorAdapters,
  d: D1Database,
  teamId: number,
  chunk: readonly LoadedRecord[],
  now: number,
): Promise<number> {
  return storeChunk(adapters, d, teamId, chunk, await chunkVectors(adapters, chunk), now);
}

/** The embedding call for one chunk: a vector per text, in order (none for a chunk without text). */
export async function chunkVectors(adapters: VectorAdapters, chunk: readonly LoadedRecord[]): Promise<number[][]> {
  const texts = chunk.flatMap((r) => r.texts);
  return texts.length ? adapters.embedder.embed(texts) : [];
}

/** Upserts a chunk's vectors and stamps its records embedded; answers the bytes the vectors took while held. */
export async function storeChunk(
  adapters: VectorAdapters,
  d: D1Database,
  teamId: number,
  chunk: readonly LoadedRecord[],
  vectors: number[][],
  now: number,
): Promise<number> {
  const texts = chunk.flatMap((r) => r.texts);
  if (texts.length) {
    let i = 0;
    const rows: VectorRecord[] = [];
    for (const r of chunk)
      for (const part of r.texts.keys())
        rows.push({
          id: r.id,
          kind: r.kind,
          part,
          teamId,
          projectId: r.projectId,
          type: r.type,
          values: vectors[i++]!,
        });
    await adapters.index.upsert(rows);
  }
  for (const kind of VECTOR_KINDS)
    await markEmbedded(
      d,
      teamId,
      kind,
      chunk.filter((r) => r.kind === kind).map((r) => r.id),
      now,
    );
  // A JS array of numbers: 8 bytes a value (plus the array's own small header).
  return texts.length * adapters.embedder.dimensions * 8;
}

/**
 * Embeds and upserts the given records of one team, one chunk of at most EMBED_CHUNK_TEXTS texts at a time
 * (embedded, upserted and marked before the next), and stamps `embedded_at`. Deleted rows are removed from the
 * index instead. Never throws: a failure is logged and the rows not yet marked stay unembedded, so the embed
 * job picks them up later (safe inside waitUntil).
 */
export async function indexRecords(
  env: CairnEnv,
  teamId: number,
  ids: RecordIds,
  opts: { adapters?: VectorAdapters | null; now?: number } = {},
): Promise<IndexOutcome> {
  let budget = MAX_PER_CALL;
  const take = (list: number[] | undefined) => {
    const unique = [...new Set(list ?? [])].filter((id) => Number.isSafeInteger(id)).slice(0, budget);
    budget -= unique.length;
    return unique;
  };
  const wanted: Required<RecordIds> = {
    observations: take(ids.observations),
    summaries: take(ids.summaries),
    prompts: take(ids.prompts),
  };
  const total = MAX_PER_CALL - budget;
  const outcome: IndexOutcome = { indexed: 0, removed: 0, failed: 0 };
  if (total === 0) return outcome;
  const adapters = opts.adapters === undefined ? getVectorAdapters(env) : opts.adapters;
  if (!adapters) return outcome;
  try {
    const d = await teamDb(env, teamId);
    const { records, gone } = await loadRecords(d, teamId, wanted);
    outcome.removed = await dropGone(adapters, teamId, gone);
    const now = opts.now ?? Date.now();
    for (const chunk of chunkRecords(records, adapters.embedder.limits)) {
      await embedChunk(adapters, d, teamId, chunk, now);
      outcome.indexed += chunk.length;
    }
  } catch (err) {
    outcome.failed = total - outcome.removed - outcome.indexed;
    log('error', 'vector indexing failed; rows stay unembedded for the embed job', {
      team_id: teamId,
      count: outcome.failed,
      message: errorText(err),
    });
  }
  return outcome;
}

/** What a stored turn wrote (src/store/turn-store.ts `StoredTurn`). */
export interface TurnRows {
  teamId: number;
  observationIds: number[];
  summaryId: number | null;
  prompt: { sessionId: number; promptNumber: number };
}

/**
 * After a turn is stored: its new observations, its summary, and the prompt it was filed under when that prompt
 * is stored and not embedded yet (a private prompt has no row, so it is never embedded; a prompt observed over
 * several turns is embedded once).
 */
export async function indexTurn(
  env: CairnEnv,
  stored: TurnRows,
  opts: { adapters?: VectorAdapters | null; now?: number } = {},
): Promise<IndexOutcome> {
  const prompt = await unembeddedPrompt(
    await teamDb(env, stored.teamId),
    stored.teamId,
    stored.prompt.sessionId,
    stored.prompt.promptNumber,
  );
  return indexRecords(
    env,
    stored.teamId,
    {
      observations: stored.observationIds,
      summaries: stored.summaryId === null ? [] : [stored.summaryId],
      prompts: prompt === null ? [] : [prompt],
    },
    opts,
  );
}

/**
 * Deletes every vector of these records, each kind and every part (an observation's facts too): forgetting,
 * retention and a move call this after the rows are gone from D1, so nothing is read first.
 */
export async function deleteRecordVectors(
  adapters: VectorAdapters | null,
  teamId: number,
  ids: RecordIds,
): Promise<void> {
  if (!adapters) return;
  for (const kind of VECTOR_KINDS) {
    const list = ids[FIELD[kind]] ?? [];
    for (let i = 0; i < list.length; i += DELETE_CHUNK)
      await adapters.index.deleteByIds(teamId, list.slice(i, i + DELETE_CHUNK), kind);
  }
}

/** Records per delete call: an observation names 1 + MAX_FACT_VECTORS ids, and Vectorize takes 1000 a call. */
const DELETE_CHUNK = 100;

/** Observations only (MCP `remember`, import, a move): see indexRecords. */
export function indexObservations(
  env: CairnEnv,
  teamId: number,
  ids: number[],
  opts: { adapters?: VectorAdapters | null; now?: number } = {},
): Promise<IndexOutcome> {
  return indexRecords(env, teamId, { observations: ids }, opts);
}
