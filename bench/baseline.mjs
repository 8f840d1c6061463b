// A throwaway copy of an earlier commit, so a benchmark can serve "before" and "after" in the same run on the
// same machine load. The copy is `git archive` of the ref with this checkout's node_modules linked in (and its
// scripts/build.mjs run, where it has one); it is removed by `cleanup`.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT } from '../scripts/dev-server.mjs';

// One free-port helper for every bench: the dev-server starter's.
export { freePort } from '../scripts/dev-server.mjs';

/** main before the ingest fast path (token memo, limit in the SessionDO, Server-Timing); override with BENCH_BASELINE_REF. */
export const BASELINE_REF = process.env.BENCH_BASELINE_REF ?? '450aca0';

export function checkoutBaseline(ref = BASELINE_REF) {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-baseline-'));
  const commit = execFileSync('git', ['rev-parse', '--short', ref], { cwd: ROOT, encoding: 'utf8' }).trim();
  const tar = execFileSync('git', ['archive', '--format=tar', commit], { cwd: ROOT, maxBuffer: 512 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', dir], { input: tar });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  // Newer trees build their client bundle and static assets instead of committing them.
  if (existsSync(path.join(dir, 'scripts', 'build.mjs')))
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: dir, stdio: 'ignore' });
  return { root: dir, commit, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
