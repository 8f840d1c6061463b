// The drizzle schema (src/db/schema.ts) and the SQL migrations must build the same database: the DDL
// drizzle-kit derives from the schema is applied to an empty SQLite (a Durable Object's storage) and every
// table is compared with D1 after the migrations: columns, types, defaults, keys, indexes, foreign keys,
// CHECK constraints and generated columns.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { getTableName } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { allTables } from '../../../src/db/schema';

type Row = Record<string, SqlStorageValue>;
type Query = (sql: string) => Promise<Row[]>;

/** The text inside the parentheses that open at `s[from]`. */
function balanced(s: string, from: number): string {
  let depth = 0;
  for (let i = from; i < s.length; i++) {
    if (s[i] === '(') depth++;
    else if (s[i] === ')' && --depth === 0) return s.slice(from + 1, i);
  }
  return s.slice(from + 1);
}

/** Outer parentheses and whitespace do not change meaning: `((a || b))` and `(a||b)` compare equal. */
function norm(expr: string): string {
  let e = expr.replace(/\s+/g, '');
  while (e.startsWith('(') && balanced(e, 0).length === e.length - 2) e = e.slice(1, -1);
  return e;
}

/** CHECK and GENERATED expressions of a CREATE TABLE statement. */
function expressions(createSql: string): string[] {
  const out: string[] = [];
  for (const m of createSql.matchAll(/\b(CHECK|GENERATED ALWAYS AS)\s*\(/gi)) {
    out.push(`${m[1]!.toUpperCase()}:${norm(balanced(createSql, m.index! + m[0].length - 1))}`);
  }
  return out.sort();
}

async function describeTable(q: Query, table: string) {
  // A primary key column counts as NOT NULL either way: drizzle writes `PRIMARY KEY NOT NULL`, the migrations `INTEGER PRIMARY KEY`.
  const columns = (
    await q(
      `SELECT name, lower(type) AS type, ("notnull" = 1 OR pk > 0) AS nn, dflt_value, pk, hidden FROM pragma_table_xinfo('${table}') ORDER BY cid`,
    )
  ).map((c) => JSON.stringify(c));
  const indexes: string[] = [];
  for (const ix of await q(`SELECT name, "unique", partial FROM pragma_index_list('${table}')`)) {
    const cols = await q(
      `SELECT name, "desc" FROM pragma_index_xinfo('${String(ix.name)}') WHERE key = 1 ORDER BY seqno`,
    );
    indexes.push(
      `${ix.unique ? 'unique ' : ''}${ix.partial ? 'partial ' : ''}(${cols.map((c) => `${String(c.name)}${c.desc ? ' desc' : ''}`).join(', ')})`,
    );
  }
  const fks = (await q(`SELECT "table", "from", "to" FROM pragma_foreign_key_list('${table}')`)).map(
    (f) => `${String(f.from)} -> ${String(f.table)}.${String(f.to)}`,
  );
  const [create] = await q(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = '${table}'`);
  return { columns, indexes: indexes.sort(), fks: fks.sort(), expressions: expressions(String(create?.sql ?? '')) };
}

const d1: Query = async (sql) => (await env.DB.prepare(sql).all<Row>()).results;

/** An empty SQLite with the schema's DDL applied: the storage of a fresh Durable Object. */
async function fromSchema<T>(fn: (q: Query) => Promise<T>): Promise<T> {
  const stub = env.LIMITERS.get(env.LIMITERS.idFromName(`schema-check-${crypto.randomUUID()}`));
  const stmts = await schemaDdl();
  return runInDurableObject(stub, async (_instance, state) => {
    for (const stmt of stmts) state.storage.sql.exec(stmt);
    return fn(async (sql) => state.storage.sql.exec<Row>(sql).toArray());
  });
}

let ddl: Promise<string[]> | null = null;
/** The schema's DDL, from the Node-side service that runs drizzle-kit (asked once per file). */
function schemaDdl(): Promise<string[]> {
  ddl ??= env.SCHEMA_DDL.fetch('http://schema/ddl').then(async (res) => {
    if (!res.ok) throw new Error(`schema DDL service: ${res.status} ${await res.text()}`);
    return (await res.json()) as string[];
  });
  return ddl;
}

const NOT_SCHEMA = `name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%' AND name NOT LIKE '%_fts%'`;

describe('the drizzle schema and the migrations', () => {
  it('name the same tables (FTS5 tables aside, which only the migrations hold)', async () => {
    const inD1 = (await d1(`SELECT name FROM sqlite_master WHERE type = 'table' AND ${NOT_SCHEMA} ORDER BY name`)).map(
      (r) => r.name,
    );
    const inSchema = Object.values(allTables)
      .map((t) => getTableName(t))
      .sort();
    expect(inSchema).toEqual(inD1);
  });

  for (const table of Object.values(allTables)) {
    const name = getTableName(table);
    it(`build the same ${name} table: columns, keys, indexes, foreign keys, checks and generated columns`, async () => {
      const expected = await describeTable(d1, name);
      const actual = await fromSchema((q) => describeTable(q, name));
      expect(expected.columns.length).toBeGreaterThan(0);
      expect(actual).toEqual(expected);
    });
  }

  it('tells tables apart when one of them differs (the comparison can fail)', async () => {
    const observations = await describeTable(d1, 'observations');
    const summaries = await fromSchema((q) => describeTable(q, 'summaries'));
    expect(summaries).not.toEqual(observations);
    const withExtra = await fromSchema(async (q) => {
      await q('ALTER TABLE teams ADD COLUMN extra TEXT');
      return describeTable(q, 'teams');
    });
    expect(withExtra).not.toEqual(await describeTable(d1, 'teams'));
  });
});
