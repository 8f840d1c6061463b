import { env } from 'cloudflare:workers';
import { getTableColumns, getTableName } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { allTables } from '../../../src/db/schema';

describe('the drizzle schema', () => {
  for (const table of Object.values(allTables)) {
    const name = getTableName(table);
    it(`describes exactly the columns the migrations give ${name}`, async () => {
      const info = await env.DB.prepare(`SELECT name, ("notnull" = 1 OR pk > 0) AS nn FROM pragma_table_info(?)`).bind(name).all<{ name: string; nn: number }>();
      const inDb = Object.fromEntries(info.results.map((r) => [r.name, r.nn === 1]));
      const inDrizzle = Object.fromEntries(Object.values(getTableColumns(table)).map((c) => [c.name, c.notNull]));
      expect(inDrizzle).toEqual(inDb);
    });
  }
});
