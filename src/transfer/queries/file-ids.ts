// The evidence ids of exported observations' files (issue 34), read for the export's `file_ids` (records.ts): one
// statement an observation page, whatever its size.
import { and, eq, isNotNull, or } from 'drizzle-orm';
import { db } from '../../db/client';
import { observationFiles as observationFileTable } from '../../db/schema';
import { byIds } from '../../db/sqlite';

/** A file's evidence ids as the export carries them (`file_ids` of an observation line, records.ts). */
export interface FileIdsOut {
  blob: string | null;
  ws: string | null;
  base: string | null;
}

/**
 * The evidence ids of the observations `ids` by observation and path: ONE statement a page (the ids bound as one
 * JSON parameter), only file rows that hold an id. A path read and modified has two rows: blob and ws are the
 * same on both (the turn's one reading), `base` is the modified row's.
 */
export async function fileIdsByObservation(
  d1: D1Database,
  teamId: number,
  ids: readonly number[],
): Promise<Map<number, Record<string, FileIdsOut>>> {
  const out = new Map<number, Record<string, FileIdsOut>>();
  if (ids.length === 0) return out;
  const f = observationFileTable;
  const rows = await db(d1)
    .select({ id: f.observationId, path: f.path, blob: f.blob, ws: f.ws, base: f.base })
    .from(f)
    .where(
      byIds(f.observationId, ids, eq(f.teamId, teamId), or(isNotNull(f.blob), isNotNull(f.ws), isNotNull(f.base))),
    );
  for (const r of rows) {
    let byPath = out.get(r.id);
    if (!byPath) out.set(r.id, (byPath = Object.create(null) as Record<string, FileIdsOut>));
    const had = byPath[r.path];
    byPath[r.path] = {
      blob: had?.blob ?? r.blob,
      ws: had?.ws ?? r.ws,
      base: had?.base ?? r.base,
    };
  }
  return out;
}
