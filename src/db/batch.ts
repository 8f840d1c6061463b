// D1 batches built from drizzle queries: all-or-nothing, one round trip.
import type { BatchItem } from 'drizzle-orm/batch';
import type { Db } from './client';

/** Runs `queries` as one D1 batch (nothing when empty) and answers each query's raw result, in order. */
export async function runBatch(d: Db, queries: BatchItem<'sqlite'>[]): Promise<unknown[]> {
  if (!queries.length) return [];
  return d.batch(queries as [BatchItem<'sqlite'>, ...BatchItem<'sqlite'>[]]);
}
