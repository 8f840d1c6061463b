// Fails when a migration would break against a remote D1 (scripts/lint-migrations.mjs: comments with quotes
// or semicolons, lower-case BEGIN/END, CRLF, transaction statements), or when src/db/schema.ts has changes
// that no migration in migrations/ carries: drizzle-kit generates into a scratch copy of migrations/ and must
// find nothing to do. (That the migrations build exactly what the schema describes is checked against real
// SQLite by test/worker/db/schema.test.ts.)
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
try {
  execFileSync(process.execPath, [join(root, 'scripts/lint-migrations.mjs'), join(root, 'migrations')], {
    stdio: 'inherit',
  });
} catch {
  process.exit(1); // the lint printed each problem
}
// drizzle-kit joins `out` onto the working directory, so the scratch copy must be a relative path.
const scratch = 'node_modules/.cache/drizzle-check';
rmSync(join(root, scratch), { recursive: true, force: true });
mkdirSync(join(root, scratch), { recursive: true });
cpSync(join(root, 'migrations'), join(root, scratch), { recursive: true });
const before = new Set(readdirSync(join(root, scratch)));

execFileSync(process.execPath, [join(root, 'node_modules/drizzle-kit/bin.cjs'), 'generate', '--name', 'drift'], {
  cwd: root,
  env: { ...process.env, DRIZZLE_OUT: `./${scratch}` },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const added = readdirSync(join(root, scratch)).filter((f) => !before.has(f) && f.endsWith('.sql'));
if (added.length) {
  console.error(`src/db/schema.ts differs from migrations/: drizzle-kit would generate ${added.join(', ')}.`);
  console.error(
    'Run `npx drizzle-kit generate --name <what-changed>` and commit the new migration and migrations/meta/.',
  );
  process.exit(1);
}
console.log('schema and migrations agree');
