// D1 is reached only through src/db/ (the schema, client, shards, visibility, SQLite/FTS helpers, the entities
// several features share) and a feature's own `queries.ts` (statements only that feature runs): nowhere else is a
// D1 statement prepared, batched or executed, or a drizzle query built. The queries are drizzle's query builder;
// SQL text (the `sql` template, raw statements on the D1 client) is confined to the modules listed below.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../../..');
const SRC = path.join(ROOT, 'src');

/**
 * Where SQL text may be written: the FTS5 statements (MATCH, bm25), SQLite fragments drizzle has no builder
 * for (json_each lists, scalar functions, an index hint), the schema (generated columns) and the Durable
 * Objects' schema migrator (their own SQLite, not D1), the meter's D1 face (it forwards statements, counting them) and the benchmarks' latency face (it forwards them after a wait).
 */
const SQL_TEXT_MODULES = [
  'src/db/do-schema.ts',
  'src/db/fts.ts',
  'src/db/latency.ts',
  'src/db/meter-d1.ts',
  'src/db/schema.ts',
  'src/db/sqlite.ts',
];

/**
 * src/db modules only one feature uses that stay in the data layer for now (none: transfer's import/export rows
 * and the move's extras pages moved to src/transfer/queries/). A new single-feature module fails the check above
 * until it lives in its feature's queries or is named here with its reason.
 */
const SINGLE_USER_DB_MODULES: string[] = [];

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return name === 'client' ? [] : tsFiles(p);
    return p.endsWith('.ts') && !p.endsWith('.generated.ts') ? [p] : [];
  });
}

const all = tsFiles(SRC).map((f) => path.relative(ROOT, f));
/**
 * A feature's own queries: `src/<feature>/queries.ts`, or, when they outgrow one file, the modules of
 * `src/<feature>/queries/` (src/transfer/queries/: import/export rows, the move's extras, the history lines).
 */
const isFeatureQueries = (f: string): boolean =>
  /^src\/[\w-]+\/(queries\.ts|queries\/[\w-]+\.ts)$/.test(f) && !f.startsWith('src/db/');
const isDataDoor = (f: string): boolean => f.startsWith('src/db/') || isFeatureQueries(f);
const outsideDb = all.filter((f) => !isDataDoor(f));
const insideDb = all.filter(isDataDoor);
const text = (f: string) => readFileSync(path.join(ROOT, f), 'utf8');

/** A D1 statement: prepare/batch on any receiver, the drizzle handle's raw client. */
const D1_CALL = /\.(prepare|batch)\s*[(<]|\.\$client\b/;
/**
 * `.exec(` on anything but a Durable Object's SQL handle (`sql.exec`, `storage.sql.exec`) or a regular
 * expression (a literal `/…/.exec` or an UPPER_CASE constant): D1's `exec` runs raw SQL text.
 */
function execOnD1(source: string): boolean {
  for (const m of source.matchAll(/([\w$.)\]/]+)\s*\.exec\s*\(/g)) {
    const receiver = m[1]!;
    if (/(^|\.)sql$/.test(receiver) || receiver.endsWith('/') || /^[A-Z][A-Z0-9_]*$/.test(receiver)) continue;
    if (/\/[dgimsuyv]*$/.test(receiver)) continue; // a regex literal with flags
    return true;
  }
  return false;
}
/** SQL text through drizzle (`sql` template, sql.raw/join) or straight on a client. */
const SQL_TEXT = /\bsql\s*(`|<|\.raw\s*\(|\.join\s*\()|\.prepare\s*\(|\.\$client\b|\.exec\s*\(/;

/** A drizzle INSERT into a table (or an alias of one). */
const INSERT = /\.insert\(\s*(\w+)\s*\)/g;

describe('the data layer door', () => {
  it('leaves no D1 prepare, batch or raw client call outside src/db/', () => {
    expect(outsideDb.filter((f) => D1_CALL.test(text(f)))).toEqual([]);
  });

  it('leaves no D1 exec outside src/db/ (Durable Object SQL and regular expressions are not D1)', () => {
    expect(outsideDb.filter((f) => execOnD1(text(f)))).toEqual([]);
  });

  it("keeps drizzle itself inside src/db/ and the features' queries.ts: other feature code calls their functions", () => {
    expect(outsideDb.filter((f) => /from ['"]drizzle-orm/.test(text(f)))).toEqual([]);
    expect(all.filter(isFeatureQueries).length).toBeGreaterThan(3);
    expect(isDataDoor('src/recall/queries.ts')).toBe(true);
    expect(isDataDoor('src/recall/service.ts')).toBe(false);
    expect(isDataDoor('src/recall/deep/queries.ts')).toBe(false);
    expect(isDataDoor('src/transfer/queries/transfer.ts')).toBe(true);
    expect(isDataDoor('src/transfer/queries/deep/x.ts')).toBe(false);
  });

  it("leaves in src/db/ no module that only one feature uses: it moves to that feature's queries.ts", () => {
    // Which folders import each src/db module (other src/db modules count as the data layer's own use).
    const users = new Map<string, Set<string>>();
    for (const f of all) {
      for (const m of text(f).matchAll(/from\s+['"](\.{1,2}\/[^'"]+)['"]/g)) {
        const target = path.relative(ROOT, path.resolve(path.dirname(path.join(ROOT, f)), m[1]!));
        if (!target.startsWith('src/db/')) continue;
        const by = f.startsWith('src/db/') ? 'src/db' : f.split('/').slice(0, 2).join('/');
        if (!users.has(target)) users.set(target, new Set());
        users.get(target)!.add(by);
      }
    }
    const single = [...users]
      .filter(([, by]) => by.size === 1 && !by.has('src/db'))
      .map(([m, by]) => `${m} (only ${[...by][0]})`);
    expect(single.filter((s) => !SINGLE_USER_DB_MODULES.some((m) => s.startsWith(m)))).toEqual([]);
  });

  it('writes SQL text inside src/db/ only in the FTS, SQLite-fragment, schema and migrator modules', () => {
    const writers = insideDb.filter((f) => SQL_TEXT.test(text(f)));
    expect(writers.filter((f) => !SQL_TEXT_MODULES.includes(f))).toEqual([]);
  });

  it('inserts into each table from one place only (one insert path per table)', () => {
    const places = new Map<string, string[]>();
    for (const f of all) {
      for (const m of text(f).matchAll(INSERT)) places.set(m[1]!, [...(places.get(m[1]!) ?? []), f]);
    }
    expect(places.size).toBeGreaterThan(10);
    expect([...places].filter(([, at]) => at.length > 1)).toEqual([]);
  });

  it('declares what an observation says once (shared/wire/records.ts); other shapes derive from it', () => {
    const shape = /\bfilesModified\??\s*:\s*(string\s*\[\]|Array<|z\.)/;
    expect(all.filter((f) => shape.test(text(f)))).toEqual(['src/shared/wire/records.ts']);
    expect(shape.test('  filesModified: string[];')).toBe(true);
  });

  it('declares what a session summary says once (shared/wire/records.ts); the feed, search, recall and observer shapes derive from it', () => {
    // `investigated` is a summary field only; the observer's mode file names it as a prompt placeholder (z.string()).
    const shape = /\binvestigated\??\s*:\s*string\b/;
    expect(all.filter((f) => shape.test(text(f)))).toEqual(['src/shared/wire/records.ts']);
    expect(shape.test('  investigated: string;')).toBe(true);
  });

  it('spells the visibility rule in one place only', () => {
    const rule = /visibility\s*=\s*'team'\s+OR\s+\w*\.?owner_user_id/i;
    expect(all.filter((f) => rule.test(text(f)))).toEqual([]);
    expect(text('src/db/visibility.ts')).toContain("or(eq(p.visibility, 'team'), eq(p.ownerUserId, v.userId))");
  });

  it('leaves the choice of database to src/db/shards.ts: no feature reads a D1 binding (env.DB, env.DB_1, …) itself', () => {
    const binding = /\benv\.DB(_\d+)?\b|\benv\[/;
    expect(outsideDb.filter((f) => binding.test(text(f)))).toEqual([]);
    expect(binding.test('await ensureProject(c.env.DB, auth, key, now)')).toBe(true);
    expect(binding.test('teamDb(this.env, teamId)')).toBe(false);
  });

  it('would notice a D1 statement or SQL text where it does not belong (the checks can fail)', () => {
    expect(D1_CALL.test("await env.DB.prepare('SELECT 1')")).toBe(true);
    expect(D1_CALL.test('await env.DB.batch([a, b])')).toBe(true);
    expect(D1_CALL.test('d.$client.prepare(q)')).toBe(true);
    expect(execOnD1("await env.DB.exec('DELETE FROM observations')")).toBe(true);
    expect(execOnD1("await d1.exec('DELETE FROM observations')")).toBe(true);
    expect(execOnD1("this.ctx.storage.sql.exec('DELETE FROM slots')")).toBe(false);
    expect(execOnD1('/^#?(\\d+)$/.exec(s)')).toBe(false);
    expect(execOnD1('WHOLE_FENCE.exec(raw)')).toBe(false);
    expect(SQL_TEXT.test('d.select().where(sql`${t.id} = 1`)')).toBe(true);
    expect(SQL_TEXT.test("sql.raw('bm25(x)')")).toBe(true);
    expect(SQL_TEXT.test('d.select({ id: t.id }).from(t).where(eq(t.id, 1))')).toBe(false);
    expect([...'d.insert(prompts).values(a); d.insert( prompts ).values(b)'.matchAll(INSERT)].map((m) => m[1])).toEqual(
      ['prompts', 'prompts'],
    );
  });
});
