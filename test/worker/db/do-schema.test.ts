// Durable Object SQLite schemas are versioned: each step runs once per object, in order, and objects that
// predate versioning adopt version 1 without losing rows.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { migrateDoSqlite } from '../../../src/db/do-schema';
import { BUFFER_SCHEMA } from '../../../src/session/buffer-schema';
import { TEAM_SCHEMA } from '../../../src/slots/team-do';

/** Runs `fn` against the SQLite storage of a fresh object that keeps no tables of its own (a LimiterDO). */
function inFreshStorage<T>(fn: (sql: SqlStorage) => T): Promise<T> {
  const stub = env.LIMITERS.get(env.LIMITERS.idFromName(`do-schema-${crypto.randomUUID()}`));
  return runInDurableObject(stub, (_instance, state) => fn(state.storage.sql));
}

const versionOf = (sql: SqlStorage) =>
  sql.exec<{ version: number }>('SELECT version FROM schema_version').one().version;
const columnsOf = (sql: SqlStorage, table: string) =>
  sql
    .exec<{ name: string }>(`SELECT name FROM pragma_table_info('${table}')`)
    .toArray()
    .map((r) => r.name);

describe('the Durable Object schema migrator', () => {
  it('applies every step once, in order, and records the version', async () => {
    await inFreshStorage((sql) => {
      const steps = [
        'CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)',
        'ALTER TABLE notes ADD COLUMN at INTEGER',
      ];
      expect(migrateDoSqlite(sql, steps)).toBe(2);
      expect(versionOf(sql)).toBe(2);
      expect(columnsOf(sql, 'notes')).toEqual(['id', 'body', 'at']);
      // A second start runs nothing (the ALTER would fail if it ran again).
      expect(migrateDoSqlite(sql, steps)).toBe(2);
    });
  });

  it('runs only the new steps on an object at an older version, keeping its rows', async () => {
    await inFreshStorage((sql) => {
      const v1 = ['CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)'];
      migrateDoSqlite(sql, v1);
      sql.exec("INSERT INTO notes (body) VALUES ('kept')");
      expect(migrateDoSqlite(sql, [...v1, "ALTER TABLE notes ADD COLUMN tag TEXT NOT NULL DEFAULT 'none'"])).toBe(2);
      expect(sql.exec('SELECT body, tag FROM notes').toArray()).toEqual([{ body: 'kept', tag: 'none' }]);
    });
  });

  it('lets an object created before versioning adopt version 1 of the buffer schema without losing events', async () => {
    await inFreshStorage((sql) => {
      sql.exec(
        'CREATE TABLE seen (event_id TEXT PRIMARY KEY, prompt_number INTEGER NOT NULL, seen_at INTEGER NOT NULL)',
      );
      sql.exec("INSERT INTO seen VALUES ('evt-1', 1, 5)");
      expect(migrateDoSqlite(sql, BUFFER_SCHEMA)).toBe(BUFFER_SCHEMA.length);
      expect(sql.exec('SELECT event_id FROM seen').toArray()).toEqual([{ event_id: 'evt-1' }]);
      expect(columnsOf(sql, 'pending')).toContain('claim_id');
    });
  });

  it('leaves storage written by newer code as it is', async () => {
    await inFreshStorage((sql) => {
      migrateDoSqlite(sql, ['CREATE TABLE a (x INTEGER)', 'CREATE TABLE b (y INTEGER)']);
      expect(migrateDoSqlite(sql, ['CREATE TABLE a (x INTEGER)'])).toBe(2);
      expect(versionOf(sql)).toBe(2);
    });
  });

  it('versions the real SessionDO and TeamDO storage', async () => {
    const session = env.SESSIONS.get(env.SESSIONS.idFromName(`do-schema-${crypto.randomUUID()}`));
    expect(await runInDurableObject(session, (_i, state) => versionOf(state.storage.sql))).toBe(BUFFER_SCHEMA.length);
    const team = env.TEAMS.get(env.TEAMS.idFromName(`do-schema-${crypto.randomUUID()}`));
    expect(await runInDurableObject(team, (_i, state) => versionOf(state.storage.sql))).toBe(TEAM_SCHEMA.length);
  });
});
