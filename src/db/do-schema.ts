// Versioned schemas for Durable Object SQLite storage (SessionDO buffer, TeamDO; HubDO and LimiterDO keep no
// SQL tables). Each object records the number of steps applied in `schema_version`; a new step is appended to
// the list and runs once in every object the next time it starts. Steps run synchronously in the constructor,
// before any request is delivered, and with no await in between they commit atomically with the version row.
// This is Durable Object storage, not D1: the D1 schema lives in schema.ts and migrations/.

/**
 * Ordered steps: step i (0-based) takes the schema from version i to version i + 1. Never edit or reorder a
 * shipped step. A step is SQL, or a function for what SQL cannot say idempotently (adding a column only
 * where it is missing).
 */
export type DoSchemaSteps = readonly (string | ((sql: SqlStorage) => void))[];

/**
 * Brings `sql` up to `steps.length` and answers the version it is at. Objects created before versioning have
 * their tables but no version row; the first step of each schema uses IF NOT EXISTS so they adopt version 1.
 * Storage written by newer code (a rolled-back deploy) is left as it is: later steps only ever add.
 */
export function migrateDoSqlite(sql: SqlStorage, steps: DoSchemaSteps): number {
  sql.exec(
    'CREATE TABLE IF NOT EXISTS schema_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)',
  );
  const current =
    sql.exec<{ version: number }>('SELECT version FROM schema_version WHERE id = 1').toArray()[0]?.version ?? 0;
  if (current >= steps.length) return current;
  for (let v = current; v < steps.length; v++) {
    const step = steps[v]!;
    if (typeof step === 'string') sql.exec(step);
    else step(sql);
  }
  sql.exec(
    'INSERT INTO schema_version (id, version) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET version = excluded.version',
    steps.length,
  );
  return steps.length;
}
