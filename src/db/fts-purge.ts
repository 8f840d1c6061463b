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
