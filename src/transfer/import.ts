// POST /api/admin/import: an NDJSON export (or a part of one) into the caller's team, and the operator's
// restore of a whole team (the team move). Every line is parsed and checked, then the whole part is planned
// with the write policy by reads alone (src/transfer/import-plan.ts), then written in ONE batch: what one call
// is given is stored completely or not at all (the request and the import job call it a piece of ≤ 90 records at a
// time, so a request's part of 250 is not: src/transfer/import-write.ts). Rows are matched by project key, session key and content hash, so importing
// the same file twice adds nothing. A part is small (MAX_IMPORT_LINES): its batch stays far under D1's
// statements per invocation and holds the database only briefly, so other teams are served meanwhile.
import { partStatements, writePart, type PartIds } from './queries/transfer';
import type { TeamDbs } from '../db/shards';
import { AppError } from '../lib/errors';
import { planPart, type ImportCounts, type Importer, type Numbered } from './import-plan';
import { historyStatements } from './queries/history';
import { ExportRecord } from './records';

export type { ImportCounts, Importer, Numbered } from './import-plan';

export const MAX_IMPORT_BYTES = 1_000_000;
/** Records a request: at most two statements each (an observation and its file rows) in one batch. */
export const MAX_IMPORT_LINES = 250;
/** The most statements one part's batch may send (D1 allows 1,000 queries an invocation on Workers Paid). */
export const MAX_PART_STATEMENTS = 2 * MAX_IMPORT_LINES + 1;

/** Parses and checks every line (linear in the body, which is bounded); 400 names the first bad line. */
export function parseNdjson(body: string): Numbered[] {
  const lines = body.split('\n');
  const out: Numbered[] = [];
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue;
    if (out.length === MAX_IMPORT_LINES)
      throw new AppError(
        413,
        'too_many_records',
        `At most ${MAX_IMPORT_LINES} records a request; send the file in parts.`,
      );
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      throw new AppError(400, 'malformed_json', `Line ${i + 1} is not valid JSON.`);
    }
    const r = ExportRecord.safeParse(raw);
    if (!r.success) {
      const issue = r.error.issues[0];
      throw new AppError(
        400,
        'invalid_record',
        `Line ${i + 1}: ${issue ? `${issue.path.join('.') || 'record'}: ${issue.message}` : 'not a record'}.`,
      );
    }
    out.push({ line: i + 1, record: r.data });
  }
  return out;
}

/**
 * Plans a part by reads alone and writes nothing: what POST /api/admin/import checks before its job writes the
 * part (a refused line is a 4xx at once). Answers what the part would add now.
 */
export async function checkPart(h: TeamDbs, who: Importer, part: Numbered[], now: number): Promise<ImportCounts> {
  if (part.length > MAX_IMPORT_LINES)
    throw new AppError(413, 'too_many_records', `At most ${MAX_IMPORT_LINES} records a part.`);
  return (await planPart(h, who, part, now)).counts;
}

/** Records without lines (the move's own export) numbered in order. */
export const numbered = (records: ExportRecord[]): Numbered[] => records.map((record, i) => ({ line: i + 1, record }));

/**
 * Imports one part into the team of `h` as `who`: planned (nothing written if a line is refused), then written
 * in one batch. Answers what it added and the new rows' ids (to be embedded). Callable part by part.
 */
export async function importPart(
  h: TeamDbs,
  who: Importer,
  part: Numbered[],
  now: number,
  auditTarget: string | null = null,
): Promise<{ counts: ImportCounts; ids: PartIds }> {
  if (part.length > MAX_IMPORT_LINES)
    throw new AppError(413, 'too_many_records', `At most ${MAX_IMPORT_LINES} records a part.`);
  const { writes, history, counts } = await planPart(h, who, part, now, auditTarget);
  const statements = partStatements(writes) + history.length;
  if (statements > MAX_PART_STATEMENTS)
    throw new Error(`import part of ${part.length} records plans ${statements} statements`);
  try {
    // The history lines last in the batch: they name rows by (session, hash), the part's own new ones too.
    return { counts, ids: await writePart(h.team, writes, (d) => historyStatements(d, h.teamId, history)) };
  } catch (err) {
    // A session or project key that changed hands between the plan and the batch: the batch rolled back whole.
    if (err instanceof Error && /NOT NULL constraint failed/.test(err.message)) {
      throw new AppError(
        409,
        'import_conflict',
        'Another write changed a project or session of this part while it was imported; nothing of it was stored. Send it again.',
      );
    }
    throw err;
  }
}
