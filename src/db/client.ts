// The one door to D1: a drizzle handle over a D1 binding. Every query in src/db/ takes a `Db`, so a second
// binding (a shard) can be routed later by handing a different handle in, without touching the queries.
import { drizzle, type DrizzleD1Database } from 'drizzle-orm/d1';
import * as schema from './schema';

export type Db = DrizzleD1Database<typeof schema> & { $client: D1Database };

const handles = new WeakMap<D1Database, Db>();

const isDb = (x: D1Database | Db): x is Db => typeof (x as Db).select === 'function';

/** The drizzle handle for a D1 binding (one per binding, reused); a handle passes through unchanged. */
export function db(binding: D1Database | Db): Db {
  if (isDb(binding)) return binding;
  let handle = handles.get(binding);
  if (!handle) {
    handle = drizzle(binding, { schema });
    handles.set(binding, handle);
  }
  return handle;
}

/** The database of this Worker's bindings. Shard routing (by team) will choose the binding here. */
export const dbOf = (env: { DB: D1Database }): Db => db(env.DB);

