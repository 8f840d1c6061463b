// FTS5 specifics of forgetting. Deleting a row from an external-content FTS5 table (our delete triggers)
// only adds a delete marker: the forgotten terms stay inside the index's segment blobs until the segments
// are merged. 'optimize' merges every segment into one and drops the deleted entries, so the text is gone
// from the index itself, not just from query results. Its cost grows with the index: called once per forget.
export type FtsTable = 'observations_fts' | 'summaries_fts' | 'prompts_fts';

export const ALL_FTS: readonly FtsTable[] = ['observations_fts', 'summaries_fts', 'prompts_fts'];

export async function purgeDeletedTerms(db: D1Database, tables: readonly FtsTable[] = ALL_FTS): Promise<void> {
  if (tables.length === 0) return;
  await db.batch(tables.map((t) => db.prepare(`INSERT INTO ${t}(${t}) VALUES ('optimize')`)));
}

/** Rebuilds the indexes from their content tables (after a restore of D1 from a backup or an import). */
export async function rebuildFts(db: D1Database, tables: readonly FtsTable[] = ALL_FTS): Promise<void> {
  await db.batch(tables.map((t) => db.prepare(`INSERT INTO ${t}(${t}) VALUES ('rebuild')`)));
}

const CONTENT: Record<FtsTable, string> = { observations_fts: 'observations', summaries_fts: 'summaries', prompts_fts: 'prompts' };

/**
 * Indexes whose row count differs from their content table's: what a restore from `wrangler d1 export` (which
 * leaves FTS5 tables out) or an import leaves behind. Counted through each index's docsize table.
 */
export async function ftsOutOfStep(db: D1Database): Promise<FtsTable[]> {
  const rows = await db.batch(
    ALL_FTS.map((t) => db.prepare(`SELECT (SELECT COUNT(*) FROM ${CONTENT[t]}) AS content, (SELECT COUNT(*) FROM ${t}_docsize) AS indexed`)),
  );
  return ALL_FTS.filter((_, i) => {
    const r = (rows[i]?.results as { content: number; indexed: number }[] | undefined)?.[0];
    return r !== undefined && r.content !== r.indexed;
  });
}

/** Rebuilds the indexes that are out of step; returns which. Run by the daily cron, so a restore heals itself. */
export async function healFts(db: D1Database): Promise<FtsTable[]> {
  const broken = await ftsOutOfStep(db);
  if (broken.length) await rebuildFts(db, broken);
  return broken;
}
