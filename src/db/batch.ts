// D1 batches built from drizzle queries: all-or-nothing, one round trip. A select in a batch comes back from D1
// as objects keyed by column name, which drizzle turns into its fields by position (Object.values): a select
// whose result has two columns of the same name (a join of two tables that both have `id` or `key`) loses one
// and shifts every field after it — a joined alias row was once read as missing this way (9e8f79c). Every batch
// therefore checks its selects' column names first and refuses a repeated one (client.ts wraps `batch`).
import { Column, is, SQL, Table, getTableColumns } from 'drizzle-orm';
import type { BatchItem as DrizzleBatchItem } from 'drizzle-orm/batch';
import type { Db } from './client';

/** A query that can go in a batch (any insert, update, delete or select built on a `Db`). */
export type BatchItem = DrizzleBatchItem<'sqlite'>;

/** Runs `queries` as one D1 batch (nothing when empty) and answers each query's raw result, in order. */
export async function runBatch(d: Db, queries: BatchItem[]): Promise<unknown[]> {
  if (!queries.length) return [];
  return d.batch(queries as [BatchItem, ...BatchItem[]]);
}

/**
 * The names SQLite gives the result columns of `fields` (a select's fields, nested for joins): a column's own
 * name, an aliased expression's alias. A bare expression is named by its text and cannot clash with a column.
 */
function columnNames(fields: unknown, out: string[] = []): string[] {
  if (is(fields, Column)) out.push(fields.name);
  else if (is(fields, SQL.Aliased)) out.push(fields.fieldAlias);
  else if (is(fields, SQL)) return out;
  else if (is(fields, Table)) for (const c of Object.values(getTableColumns(fields))) columnNames(c, out);
  // Read through the property descriptors: a select's fields come behind drizzle's selection proxy, whose `get`
  // throws for an unaliased SQL field (`{ n: count() }`); the descriptors are the plain fields underneath.
  else if (fields && typeof fields === 'object')
    for (const d of Object.values(Object.getOwnPropertyDescriptors(fields))) columnNames(d.value, out);
  return out;
}

interface Selecting {
  getSelectedFields(): unknown;
}
const selects = (q: unknown): q is Selecting =>
  typeof q === 'object' && q !== null && typeof (q as Partial<Selecting>).getSelectedFields === 'function';

/** Throws when a select of the batch would answer two columns of one name (see the top of this file). */
export function assertDistinctColumns(queries: readonly unknown[]): void {
  for (const [i, q] of queries.entries()) {
    if (!selects(q)) continue;
    const seen = new Set<string>();
    for (const name of columnNames(q.getSelectedFields())) {
      if (seen.has(name))
        throw new Error(
          `D1 batch query ${i + 1} selects two columns named "${name}": D1 batch rows are keyed by column name, so one would overwrite the other. Select it once, alias it (sql\`…\`.as()), or split the select.`,
        );
      seen.add(name);
    }
  }
}
