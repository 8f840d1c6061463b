// Vector bookkeeping in D1: the local vector index (wrangler dev and tests; production uses Vectorize) and
// which observations, summaries and prompts still need embedding.
import { and, asc, count, desc, eq, gt, isNull, type SQL } from 'drizzle-orm';
import { runBatch } from './batch';
import { db as dbOf, type Db } from './client';
import { localVectorGenerations, localVectors, observations, prompts, summaries } from './schema';
import {
  belowLiteral,
  byIds,
  excluded,
  groupConcat,
  hexOf,
  inJsonList,
  localVectorEntry,
  notInJsonList,
  plus,
} from './sqlite';

export type LocalVectorKind = 'observation' | 'summary' | 'prompt';

export interface LocalVectorRow {
  kind: LocalVectorKind;
  recordId: number;
  /** 0 = the record's main text; i ≥ 1 = an observation's i-th fact. */
  part: number;
  teamId: number;
  projectId: number;
  type: string;
  embedding: ArrayBuffer;
}

/** Rows per INSERT: each row binds 7 parameters and D1 allows 100 per statement. */
const VECTOR_ROWS_PER_STATEMENT = 14;

/** Statements `upsertLocalVectors` sends for `rows` vectors (a job sizes its chunks with it). */
export const localUpsertStatements = (rows: number): number => Math.ceil(rows / VECTOR_ROWS_PER_STATEMENT);

/** Stores or replaces the vectors (one row per record part), 14 rows a statement, in one batch. */
export async function upsertLocalVectors(d1: D1Database | Db, rows: LocalVectorRow[]): Promise<void> {
  const d = dbOf(d1);
  const statements = [];
  for (let i = 0; i < rows.length; i += VECTOR_ROWS_PER_STATEMENT) {
    const values = rows
      .slice(i, i + VECTOR_ROWS_PER_STATEMENT)
      .map((r) => ({ ...r, embedding: Buffer.from(r.embedding) }));
    statements.push(
      d
        .insert(localVectors)
        .values(values)
        .onConflictDoUpdate({
          target: [localVectors.kind, localVectors.recordId, localVectors.part],
          set: {
            teamId: excluded(localVectors.teamId),
            projectId: excluded(localVectors.projectId),
            type: excluded(localVectors.type),
            embedding: excluded(localVectors.embedding),
          },
        }),
    );
  }
  await runBatch(d, statements);
}

/** Every part of these records of one kind. */
export async function deleteLocalVectors(
  d1: D1Database | Db,
  teamId: number,
  kind: LocalVectorKind,
  ids: number[],
): Promise<void> {
  await dbOf(d1)
    .delete(localVectors)
    .where(and(eq(localVectors.teamId, teamId), eq(localVectors.kind, kind), inJsonList(localVectors.recordId, ids)))
    .run();
}

export interface LocalVectorScope {
  teamId: number;
  kind: LocalVectorKind;
  projectIds?: number[];
  excludeProjectIds?: number[];
  types?: string[];
}

/** The newest `limit` vectors in scope (all parts of a record together), each with a fingerprint (hex of its first and last 8 bytes). */
export async function localVectorFingerprints(
  d1: D1Database | Db,
  q: LocalVectorScope,
  limit: number,
): Promise<{ id: number; part: number; fp: string }[]> {
  const scope: (SQL | undefined)[] = [
    eq(localVectors.teamId, q.teamId),
    eq(localVectors.kind, q.kind),
    q.projectIds?.length ? inJsonList(localVectors.projectId, q.projectIds) : undefined,
    !q.projectIds?.length && q.excludeProjectIds?.length
      ? notInJsonList(localVectors.projectId, q.excludeProjectIds)
      : undefined,
    q.types?.length ? inJsonList(localVectors.type, q.types) : undefined,
  ];
  // Answered from idx_local_vectors_fingerprint alone (never from the 2 KB vector rows), as one text of
  // `id:part:fingerprint` entries: 5,000 rows crossing into the Worker one by one cost more than reading them.
  const d = dbOf(d1);
  const newest = d
    .select({ entry: localVectorEntry().as('entry') })
    .from(localVectors)
    .where(and(...scope))
    .orderBy(desc(localVectors.recordId), asc(localVectors.part))
    .limit(limit)
    .as('newest');
  const row = await d
    .select({ all: groupConcat(newest.entry, ',') })
    .from(newest)
    .get();
  const out: { id: number; part: number; fp: string }[] = [];
  for (const entry of row?.all ? row.all.split(',') : []) {
    const [id, part, fp] = entry.split(':');
    out.push({ id: Number(id), part: Number(part), fp: fp ?? '' });
  }
  // group_concat keeps no promised order: newest first, parts in order, as the statement above sorts them.
  return out.sort((a, b) => b.id - a.id || a.part - b.part);
}

/**
 * The team's counter for one kind of local vector, moved by every insert, update and delete of one (the
 * triggers of migrations/0010_local_vector_generations.sql); 0 before the first write.
 */
export async function localVectorGeneration(
  d1: D1Database | Db,
  teamId: number,
  kind: LocalVectorKind,
): Promise<number> {
  const row = await dbOf(d1)
    .select({ generation: localVectorGenerations.generation })
    .from(localVectorGenerations)
    .where(and(eq(localVectorGenerations.teamId, teamId), eq(localVectorGenerations.kind, kind)))
    .get();
  return row?.generation ?? 0;
}

/** The vectors (every part) of records `ids` of one kind, as hex strings. */
export async function localVectorHex(
  d1: D1Database | Db,
  kind: LocalVectorKind,
  ids: number[],
): Promise<{ id: number; part: number; hex: string }[]> {
  return dbOf(d1)
    .select({ id: localVectors.recordId, part: localVectors.part, hex: hexOf(localVectors.embedding) })
    .from(localVectors)
    .where(and(eq(localVectors.kind, kind), inJsonList(localVectors.recordId, ids)));
}

/** The fields embedding needs, for the team's observations among `ids` (deleted ones included, to drop them). */
export async function observationsToEmbed(d1: D1Database | Db, teamId: number, ids: number[]) {
  return dbOf(d1)
    .select({
      id: observations.id,
      project_id: observations.projectId,
      type: observations.type,
      title: observations.title,
      subtitle: observations.subtitle,
      narrative: observations.narrative,
      facts: observations.facts,
      concepts: observations.concepts,
      files_read: observations.filesRead,
      files_modified: observations.filesModified,
      deleted_at: observations.deletedAt,
    })
    .from(observations)
    .where(byIds(observations.id, ids, eq(observations.teamId, teamId)));
}

/** The fields embedding needs, for the team's summaries among `ids` (deleted ones included, to drop them). */
export async function summariesToEmbed(d1: D1Database | Db, teamId: number, ids: number[]) {
  return dbOf(d1)
    .select({
      id: summaries.id,
      project_id: summaries.projectId,
      request: summaries.request,
      investigated: summaries.investigated,
      learned: summaries.learned,
      completed: summaries.completed,
      next_steps: summaries.nextSteps,
      notes: summaries.notes,
      deleted_at: summaries.deletedAt,
    })
    .from(summaries)
    .where(byIds(summaries.id, ids, eq(summaries.teamId, teamId)));
}

/** The team's prompts among `ids`, with their text (a private prompt was never stored, so it is never here). */
export async function promptsToEmbed(d1: D1Database | Db, teamId: number, ids: number[]) {
  return dbOf(d1)
    .select({ id: prompts.id, project_id: prompts.projectId, text: prompts.text })
    .from(prompts)
    .where(byIds(prompts.id, ids, eq(prompts.teamId, teamId)));
}

/** The id of a session's prompt by its number when it is stored (a private prompt is not) and has no vector yet. */
export async function unembeddedPrompt(
  d1: D1Database | Db,
  teamId: number,
  sessionId: number,
  promptNumber: number,
): Promise<number | null> {
  const row = await dbOf(d1)
    .select({ id: prompts.id })
    .from(prompts)
    .where(
      and(
        eq(prompts.teamId, teamId),
        eq(prompts.sessionId, sessionId),
        eq(prompts.promptNumber, promptNumber),
        isNull(prompts.embeddedAt),
      ),
    )
    .get();
  return row?.id ?? null;
}

const TABLES = { observation: observations, summary: summaries, prompt: prompts } as const;

/**
 * Embedding calls that may refuse a record alone before it is skipped: it leaves the records to embed (the
 * `_unembedded` partial indexes name this number: migrations/0023) and health counts it. A record the embedder
 * refuses every time (too long for its window, text it cannot read) would otherwise be tried first by every run.
 */
export const MAX_EMBED_FAILURES = 3;

/** Stamps records embedded (and clears any failures they had). */
export async function markEmbedded(
  d1: D1Database | Db,
  teamId: number,
  kind: LocalVectorKind,
  ids: number[],
  now: number,
): Promise<void> {
  if (ids.length === 0) return;
  const t = TABLES[kind];
  await dbOf(d1)
    .update(t)
    .set({ embeddedAt: now, embedFailures: 0 })
    .where(byIds(t.id, ids, eq(t.teamId, teamId)))
    .run();
}

/** Counts one refused embedding call against each of these records (MAX_EMBED_FAILURES of them skip it). */
export async function markEmbedFailed(
  d1: D1Database | Db,
  teamId: number,
  kind: LocalVectorKind,
  ids: number[],
): Promise<void> {
  if (ids.length === 0) return;
  const t = TABLES[kind];
  await dbOf(d1)
    .update(t)
    .set({ embedFailures: plus(t.embedFailures, 1) })
    .where(byIds(t.id, ids, eq(t.teamId, teamId)))
    .run();
}

/**
 * Live rows without a vector yet and not skipped (each matches its table's partial `_unembedded` index: the
 * failure bound is written as the index's own constant, test/worker/db/query-plans.test.ts).
 */
const unembedded = (teamId: number, kind: LocalVectorKind): SQL | undefined => {
  if (kind === 'observation')
    return and(
      eq(observations.teamId, teamId),
      isNull(observations.embeddedAt),
      isNull(observations.deletedAt),
      belowLiteral(observations.embedFailures, MAX_EMBED_FAILURES),
    );
  if (kind === 'summary')
    return and(
      eq(summaries.teamId, teamId),
      isNull(summaries.embeddedAt),
      isNull(summaries.deletedAt),
      belowLiteral(summaries.embedFailures, MAX_EMBED_FAILURES),
    );
  return and(
    eq(prompts.teamId, teamId),
    isNull(prompts.embeddedAt),
    belowLiteral(prompts.embedFailures, MAX_EMBED_FAILURES),
  );
};

/** Ids after `after` of live records of one kind not yet embedded (and not skipped), oldest first. */
export async function unembeddedIds(
  d1: D1Database | Db,
  teamId: number,
  kind: LocalVectorKind,
  limit: number,
  after = 0,
): Promise<number[]> {
  const t = TABLES[kind];
  const rows = await dbOf(d1)
    .select({ id: t.id })
    .from(t)
    .where(and(unembedded(teamId, kind), gt(t.id, after)))
    .orderBy(asc(t.id))
    .limit(limit);
  return rows.map((r) => r.id);
}

/** Ids of live records of one kind after `after`, in id order (re-embedding walks them all). */
export async function liveIdsAfter(
  d1: D1Database | Db,
  teamId: number,
  kind: LocalVectorKind,
  after: number,
  limit: number,
): Promise<number[]> {
  const t = TABLES[kind];
  const live = kind === 'prompt' ? undefined : isNull((t as typeof observations | typeof summaries).deletedAt);
  const rows = await dbOf(d1)
    .select({ id: t.id })
    .from(t)
    .where(and(eq(t.teamId, teamId), gt(t.id, after), live))
    .orderBy(asc(t.id))
    .limit(limit);
  return rows.map((r) => r.id);
}

/** Live records of one kind (what `embed` in mode `all` walks). */
export async function countLive(d1: D1Database | Db, teamId: number, kind: LocalVectorKind): Promise<number> {
  const t = TABLES[kind];
  const live = kind === 'prompt' ? undefined : isNull((t as typeof observations | typeof summaries).deletedAt);
  const row = await dbOf(d1)
    .select({ n: count() })
    .from(t)
    .where(and(eq(t.teamId, teamId), live))
    .get();
  return row?.n ?? 0;
}

export async function countUnembedded(d1: D1Database | Db, teamId: number, kind: LocalVectorKind): Promise<number> {
  const t = TABLES[kind];
  const row = await dbOf(d1).select({ n: count() }).from(t).where(unembedded(teamId, kind)).get();
  return row?.n ?? 0;
}
