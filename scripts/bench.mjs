// npm run bench: runs every bench/*.bench.mjs in name order, each in its own Node process; stops at the first failure;
// then prints the issue-13 table (bench/summary.mjs).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './dev-server.mjs';

const only = process.argv.slice(2);
const files = readdirSync(path.join(ROOT, 'bench'))
  .filter((f) => f.endsWith('.bench.mjs'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
for (const f of files) {
  console.log(`\n=== ${f} ===`);
  const started = Date.now();
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bench', f)], { cwd: ROOT, stdio: 'inherit' });
  console.log(
    `=== ${f}: ${r.status === 0 ? 'ok' : `failed (${r.status ?? r.signal})`} in ${((Date.now() - started) / 1000).toFixed(1)} s ===`,
  );
  if (r.status !== 0) process.exit(r.status ?? 1);
}
// Last, the issue-13 table from the sections the benches just wrote (all of them, or the ones asked for).
spawnSync(process.execPath, [path.join(ROOT, 'bench', 'summary.mjs')], { cwd: ROOT, stdio: 'inherit' });
