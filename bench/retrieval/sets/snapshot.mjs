// Reads files from a public repository snapshot (a bare git directory, as the `fetch` tool leaves it) that the
// developer points an environment variable at. Nothing is downloaded: no snapshot, no set.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/** The git directory named by `envVar`, or null (with the reason) when it is unset or not a git directory. */
export function snapshotDir(envVar) {
  const dir = process.env[envVar];
  if (!dir) return { dir: null, why: `${envVar} is not set` };
  const gitDir = existsSync(path.join(dir, 'HEAD')) ? dir : path.join(dir, '.git');
  if (!existsSync(path.join(gitDir, 'HEAD'))) return { dir: null, why: `${envVar}=${dir} is not a git directory` };
  return { dir: gitDir, why: null };
}

/** Runs git in the snapshot and returns stdout; throws with stderr on failure. */
export function git(dir, args, maxBuffer = 256 * 1024 * 1024) {
  const r = spawnSync('git', ['--git-dir', dir, ...args], { encoding: 'utf8', maxBuffer });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed in ${dir}: ${r.stderr}`);
  return r.stdout;
}
