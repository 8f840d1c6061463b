// A server's fresh database starts as a copy of one migrated once (scripts/dev-server.mjs, applyMigrations): the
// copy must hold exactly what `wrangler d1 migrations apply` would have made, a new migration must make a new
// template, and a database that already holds data is migrated in place, never replaced by a copy.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { applyMigrations, migratedTemplate, QUIET_ENV, ROOT, templateDir } from '../../../scripts/dev-server.mjs';

const WRANGLER = path.join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js');

/** Every folder a test made: its config, its databases and the templates it built. */
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A config folder with one D1 binding (a database id no other run has used) and its own migrations folder. */
function project(): { cwd: string; migrations: string } {
  const cwd = mkdtempSync(path.join(tmpdir(), 'cairn-template-test-'));
  const migrations = path.join(cwd, 'migrations');
  mkdirSync(migrations);
  made.push(cwd);
  writeFileSync(
    path.join(cwd, 'wrangler.toml'),
    [
      'name = "template-test"',
      'compatibility_date = "2025-01-01"',
      '[[d1_databases]]',
      'binding = "DB"',
      'database_name = "template-test"',
      `database_id = "${randomUUID()}"`,
      `migrations_dir = "${migrations}"`,
    ].join('\n'),
  );
  return { cwd, migrations };
}

/** Runs `statements` (one wrangler start: ~2 s each here) and answers each one's rows. */
function sql(cwd: string, persistTo: string, ...statements: string[]): Array<Array<Record<string, unknown>>> {
  const r = spawnSync(
    process.execPath,
    [
      WRANGLER,
      'd1',
      'execute',
      'DB',
      '--local',
      '--persist-to',
      persistTo,
      '--json',
      '--command',
      statements.join('; '),
    ],
    { cwd, encoding: 'utf8', env: { ...process.env, ...QUIET_ENV } },
  );
  if (r.status !== 0) throw new Error(`wrangler d1 execute failed:\n${r.stdout}\n${r.stderr}`);
  return (JSON.parse(r.stdout) as Array<{ results: Array<Record<string, unknown>> }>).map((x) => x.results);
}

const APPLIED = 'SELECT name FROM d1_migrations ORDER BY id';
const names = (rows: Array<Record<string, unknown>> | undefined) => rows?.map((row) => row.name);
function fresh(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-template-db-'));
  made.push(dir);
  return dir;
}
const files = (dir: string) => readdirSync(path.join(dir, 'v3', 'd1'), { recursive: true, encoding: 'utf8' }).sort();

describe('fresh databases copied from a migrated template', () => {
  it('gives every fresh database the migrations wrangler applies, and a new migration a new template', () => {
    const { cwd, migrations } = project();
    writeFileSync(path.join(migrations, '0001_notes.sql'), 'CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT);');

    // A lock left by a builder that died (older than the takeover time) does not stop the build.
    const lock = `${templateDir(cwd)}.lock`;
    mkdirSync(lock);
    const died = new Date(Date.now() - 10 * 60_000);
    utimesSync(lock, died, died);

    const first = fresh();
    applyMigrations({ persistTo: first, cwd });
    const template = migratedTemplate(cwd);
    expect(template).toBe(templateDir(cwd));
    expect(existsSync(lock)).toBe(false);
    made.push(template);
    const [before] = sql(cwd, first, APPLIED, "INSERT INTO notes (text) VALUES ('kept across a migration')");
    expect(names(before)).toEqual(['0001_notes.sql']);
    const second = fresh();
    applyMigrations({ persistTo: second, cwd });
    expect(migratedTemplate(cwd)).toBe(template);
    for (const name of files(template).filter((f) => f.endsWith('.sqlite')))
      expect(readFileSync(path.join(second, 'v3', 'd1', name))).toEqual(
        readFileSync(path.join(template, 'v3', 'd1', name)),
      );

    writeFileSync(path.join(migrations, '0002_tags.sql'), 'CREATE TABLE tags (note INTEGER, tag TEXT);');
    // A fresh lock whose holder's process has ended (a run killed mid-build) does not stop the build either.
    const deadLock = `${templateDir(cwd)}.lock`;
    mkdirSync(deadLock);
    writeFileSync(path.join(deadLock, 'pid'), String(spawnSync(process.execPath, ['-e', '']).pid));
    made.push(migratedTemplate(cwd));
    expect(existsSync(deadLock)).toBe(false);
    expect(migratedTemplate(cwd)).not.toBe(template);
    const third = fresh();
    applyMigrations({ persistTo: third, cwd });
    const [thirdApplied, thirdNotes] = sql(cwd, third, APPLIED, 'SELECT count(*) AS n FROM notes');
    expect(names(thirdApplied)).toEqual(['0001_notes.sql', '0002_tags.sql']);
    expect(thirdNotes).toEqual([{ n: 0 }]);

    // A database with data is migrated where it is.
    applyMigrations({ persistTo: first, cwd });
    const [firstApplied, firstNotes] = sql(cwd, first, APPLIED, 'SELECT text FROM notes');
    expect(names(firstApplied)).toEqual(['0001_notes.sql', '0002_tags.sql']);
    expect(firstNotes).toEqual([{ text: 'kept across a migration' }]);
  }, 120_000);
});
