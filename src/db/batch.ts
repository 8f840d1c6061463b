// D1 batches built from drizzle queries: all-or-nothing, one round trip.
import type { BatchItem as DrizzleBatchItem } from 'drizzle-orm/batch';
import type { Db } from './client';

/** A query that can go in a batch (any insert, update, delete or select built on a `Db`). */
export type BatchItem = DrizzleBatchItem<'sqlite'>;

/** Runs `queries` as one D1 batch (nothing when empty) and answers each query's raw result, in order. */
export async function runBatch(d: Db, queries: BatchItem[]): Promise<unknown[]> {
  if (!queries.length) return [];
  return d.batch(queries as [BatchItem, ...BatchItem[]]);
}
