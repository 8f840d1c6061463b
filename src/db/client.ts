// The one door to D1: a drizzle handle over a D1 binding. Every query in src/db/ takes its database as an
// argument; which database holds a team is decided in one place, src/db/shards.ts (`teamDb`).
import { drizzle, type DrizzleD1Database } from 'drizzle-orm/d1';
import { assertDistinctColumns } from './batch';
import { meteredD1 } from './meter-d1';
import * as schema from './schema';

export type Db = DrizzleD1Database<typeof schema> & { $client: D1Database };

const handles = new WeakMap<D1Database, Db>();

const isDb = (x: D1Database | Db): x is Db => typeof (x as Db).select === 'function';

/**
 * The drizzle handle for a D1 binding (one per binding, reused); a handle passes through unchanged. Its
 * statements are counted into the invocation that sends them (db/meter.ts, meter-d1.ts), and its batches refuse a select
 * with two columns of one name (db/batch.ts).
 */
export function db(binding: D1Database | Db): Db {
  if (isDb(binding)) return binding;
  let handle = handles.get(binding);
  if (!handle) {
    handle = drizzle(meteredD1(binding), { schema }) as Db;
    // Every batch, wherever it is built, refuses a select whose rows would lose a column (db/batch.ts).
    const batch = handle.batch.bind(handle);
    const guarded: Db['batch'] = async (queries) => {
      assertDistinctColumns(queries);
      return batch(queries);
    };
    handle.batch = guarded;
    handles.set(binding, handle);
  }
  return handle;
}
