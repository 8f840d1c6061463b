// `npm run db:check` refuses SQL that a remote D1 mishandles, each form on its own; the shipped migrations pass.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lintMigrationSql, lintMigrationsDir } from '../../../scripts/lint-migrations.mjs';

const ROOT = path.resolve(__dirname, '../../..');
const LINT = path.join(ROOT, 'scripts/lint-migrations.mjs');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const TRIGGER = `CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER);
CREATE TABLE log (id INTEGER);
CREATE TRIGGER t_ai AFTER INSERT ON t BEGIN
  INSERT INTO log (id) VALUES (new.id);
  UPDATE t SET n = coalesce(new.n, 0) WHERE id = new.id;
END;
`;

/** Each form that breaks `wrangler d1 migrations apply --remote`, with the rule that must name it. */
const BAD: { name: string; sql: string; rule: string; line: number }[] = [
  {
    name: 'a quote in a line comment',
    sql: "-- the team's table\nCREATE TABLE a (id INTEGER);\nCREATE TABLE b (id INTEGER);\n",
    rule: 'comment-quote',
    line: 1,
  },
  {
    name: 'a double quote in a block comment',
    sql: 'CREATE TABLE a (id INTEGER);\n/* named "a" */\nCREATE TABLE b (id INTEGER);\n',
    rule: 'comment-quote',
    line: 2,
  },
  {
    name: 'a semicolon in a comment',
    sql: 'CREATE TABLE a (id INTEGER);\n-- first a; then b\nCREATE TABLE b (id INTEGER);\n',
    rule: 'comment-semicolon',
    line: 2,
  },
  {
    name: 'a lower-case begin in a trigger',
    sql: TRIGGER.replace('ON t BEGIN', 'ON t begin'),
    rule: 'keyword-case',
    line: 3,
  },
  { name: 'a lower-case end closing a trigger', sql: TRIGGER.replace(/^END;/m, 'end;'), rule: 'keyword-case', line: 6 },
  {
    name: 'a CASE … END inside a trigger body',
    sql: TRIGGER.replace('coalesce(new.n, 0)', 'CASE WHEN new.n IS NULL THEN 0 ELSE new.n END'),
    rule: 'trigger-case',
    line: 5,
  },
  {
    name: 'a lower-case case … end inside a trigger body',
    sql: TRIGGER.replace('coalesce(new.n, 0)', 'case when new.n is null then 0 else new.n end'),
    rule: 'trigger-case',
    line: 5,
  },
  { name: 'CRLF line endings', sql: TRIGGER.replace(/\n/g, '\r\n'), rule: 'crlf', line: 1 },
  { name: 'BEGIN TRANSACTION … COMMIT', sql: `BEGIN TRANSACTION;\n${TRIGGER}COMMIT;\n`, rule: 'transaction', line: 1 },
  { name: 'a bare COMMIT', sql: `${TRIGGER}COMMIT;\n`, rule: 'transaction', line: 7 },
];

function runLint(files: Record<string, string>): { status: number | null; out: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-lint-'));
  dirs.push(dir);
  for (const [name, sql] of Object.entries(files)) writeFileSync(path.join(dir, name), sql);
  const r = spawnSync(process.execPath, [LINT, dir], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

describe('migration lint for remote D1', () => {
  it.each(BAD)('fails on $name, naming the file and line', ({ sql, rule, line }) => {
    expect(lintMigrationSql(sql).map((p) => `${p.line}:${p.rule}`)).toContain(`${line}:${rule}`);
    const { status, out } = runLint({ '0001_ok.sql': TRIGGER, '0002_bad.sql': sql });
    expect(status).toBe(1);
    expect(out).toContain(`0002_bad.sql:${line}: ${rule}`);
    expect(out).not.toContain('0001_ok.sql');
  });

  it('passes quotes, semicolons and lower-case words inside strings and quoted names, a clean trigger, and CASE outside a trigger', () => {
    const sql = `${TRIGGER}UPDATE t SET n = CASE WHEN n IS NULL THEN 0 ELSE n END;\nINSERT INTO a (s) VALUES ('it''s; -- not a comment /* nor this */ begin end');\nCREATE TABLE "weird; name" (\`end\` TEXT, [begin] TEXT);\n-- plain comment, no marks\n`;
    expect(lintMigrationSql(sql)).toEqual([]);
  });

  it('reads drizzle-kit statement breakpoints as the harmless comments they are', () => {
    expect(lintMigrationSql('CREATE TABLE a (id INTEGER);--> statement-breakpoint\nCREATE INDEX i ON a (id);')).toEqual(
      [],
    );
  });

  it('passes every shipped migration, through the same command db:check runs', () => {
    expect(lintMigrationsDir(path.join(ROOT, 'migrations'))).toEqual([]);
    const r = spawnSync(process.execPath, [LINT], { encoding: 'utf8', cwd: ROOT });
    expect(r.status).toBe(0);
  });

  it('names the failure that wrangler itself shows: its splitter runs past a lower-case end', async () => {
    // wrangler's own splitter (the one `d1 execute` uses locally) closes a trigger body only on an upper-case END.
    const { unstable_splitSqlQuery: split } = (await import('wrangler')) as unknown as {
      unstable_splitSqlQuery: (sql: string) => string[];
    };
    expect(split(TRIGGER)).toHaveLength(3);
    expect(split(`${TRIGGER.replace(/^END;/m, 'end;')}CREATE TABLE c (id INTEGER);\n`)).toHaveLength(3);
  });
});
