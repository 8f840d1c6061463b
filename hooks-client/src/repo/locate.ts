// Which repository a folder belongs to, read from .git on disk (no `git` process: this runs on every event), and
// whether the client may trust it. A folder is someone else's content (a clone, an archive): its `.git` may be a
// file or a link aiming at another repository of the user's (whose commits and files would then be read and
// sent under this folder's name), its git files may be links, FIFOs or huge, and the checkout may belong to
// another account. So: `.git` (file, link or folder) must lead inside the checkout, or to a repository that
// names this checkout as its own (git's back-links: a linked worktree's `gitdir` file, a submodule's
// `core.worktree`); git files are read as bounded regular files, never through a link.
import { lstatSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { configValues } from './config-file';
import { readRegularFile } from './read';

export interface RepoInfo {
  /** The main checkout's folder (for a worktree: the folder of the repository it belongs to). */
  mainRoot: string;
  /** This checkout's top level (`git rev-parse --show-toplevel`): a worktree's or submodule's own folder. */
  root: string;
  configPath: string;
  /** This checkout's own git folder (a worktree's `.git/worktrees/<name>`): where its HEAD is. */
  gitDir: string;
  /** The folder shared by every worktree: refs, packed-refs, config. */
  commonDir: string;
  /** gitDir and commonDir with every link resolved: where readGitFile reads (no second realpath per file). */
  real: { gitDir: string; commonDir: string };
}

/** A checkout the client does not read: `root` is its folder, `reason` says why in words for the user. */
export interface RepoRefusal {
  refused: string;
  root: string;
}

/** Git's own files are small; packed-refs of a big repository is the largest the client reads. */
const GIT_FILE_MAX = 16 * 1024 * 1024;

/**
 * A git file's text (`HEAD`, a ref, `packed-refs`, `config`, `commondir`, a `.git` file), or null: absent, a link,
 * not a regular file, or past GIT_FILE_MAX. `rel` is inside `dir` (git's names, `/`-separated).
 */
export function readGitFile(dir: string, rel: string, realDir?: string): string | null {
  const buf = readRegularFile(dir, rel, GIT_FILE_MAX, realDir);
  return buf === null ? null : buf.toString('utf8');
}

/** Real paths, each asked of the file system once per lookup (a lookup runs on every hook event). */
function realpaths(): (p: string) => string | null {
  const seen = new Map<string, string | null>();
  return (p) => {
    let v = seen.get(p);
    if (v !== undefined) return v;
    try {
      v = realpathSync.native(p);
    } catch {
      v = null;
    }
    seen.set(p, v);
    return v;
  };
}

/** Whether `inner` is `outer` or below it (both real paths). */
const within = (outer: string, inner: string) =>
  inner === outer || inner.startsWith(outer.endsWith(sep) ? outer : outer + sep);

/**
 * Where `dir/.git` leads: a folder inside the checkout, or a `.git` file's target that names this checkout back.
 * null: no `.git` here. A refusal: `.git` leads elsewhere.
 */
function gitDirOf(
  dir: string,
  real: (p: string) => string | null,
): { gitDir: string; linked: 'worktree' | null } | { refused: string } | null {
  const dotGit = join(dir, '.git');
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(dotGit);
  } catch {
    return null;
  }
  const root = real(dir);
  if (!root) return null;
  if (st.isDirectory()) return { gitDir: dotGit, linked: null };
  if (st.isSymbolicLink()) {
    const to = real(dotGit);
    if (!to) return null;
    if (within(root, to)) return { gitDir: dotGit, linked: null };
    return { refused: `its .git is a link to ${to}, outside the checkout` };
  }
  if (!st.isFile()) return null;
  const m = /^gitdir:\s*(.+)$/m.exec(readGitFile(dir, '.git', root) ?? '');
  if (!m) return null;
  const target = resolve(dir, m[1]!.trim());
  const to = real(target);
  if (!to) return { refused: `its .git file points at ${target}, which does not exist` };
  if (within(root, to)) return { gitDir: target, linked: null };
  // A linked worktree: git wrote the path of this very .git file into the worktree's own folder.
  const back = readGitFile(to, 'gitdir', to)?.trim();
  if (back && real(resolve(to, back)) === real(dotGit)) return { gitDir: target, linked: 'worktree' };
  // A submodule: its repository (in the superproject's .git/modules/) names this folder as its work tree.
  const worktree = configValues(readGitFile(to, 'config', to) ?? '', 'core', 'worktree').pop();
  if (worktree && real(resolve(to, worktree)) === root) return { gitDir: target, linked: null };
  return { refused: `its .git file points at ${to}, a repository outside the checkout that does not name it` };
}

/**
 * The repository enclosing `cwd` (the nearest `.git` up the tree, as git finds it), a refusal when that `.git`
 * leads outside the checkout, or null outside any repository.
 */
export function locateRepo(cwd: string): RepoInfo | RepoRefusal | null {
  let dir = resolve(cwd);
  const real = realpaths();
  for (let i = 0; i < 64; i++) {
    const found = gitDirOf(dir, real);
    if (found && 'refused' in found) return { refused: found.refused, root: dir };
    if (found) {
      const { gitDir } = found;
      const realGit = real(gitDir);
      if (!realGit) return null;
      const common = readGitFile(gitDir, 'commondir', realGit)?.trim();
      const commonDir = common ? (isAbsolute(common) ? common : resolve(gitDir, common)) : gitDir;
      // A worktree's folder is <common>/worktrees/<name>; anything else must stay inside the checkout.
      const realCommon = real(commonDir);
      const rootReal = real(dir);
      const fits =
        realCommon !== null &&
        rootReal !== null &&
        (realCommon === realGit ||
          within(rootReal, realCommon) ||
          (found.linked === 'worktree' && realCommon === real(dirname(dirname(realGit)))));
      if (!fits || !realCommon)
        return { refused: `its git folder's commondir points at ${commonDir}, outside the checkout`, root: dir };
      const mainRoot = basename(commonDir) === '.git' ? dirname(commonDir) : dir;
      return {
        mainRoot,
        root: dir,
        configPath: join(commonDir, 'config'),
        gitDir,
        commonDir,
        real: { gitDir: realGit, commonDir: realCommon },
      };
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
  return null;
}

export const isRefusal = (r: RepoInfo | RepoRefusal | null): r is RepoRefusal => r !== null && 'refused' in r;

/** The repository enclosing `cwd`, or null: outside any repository, or one whose `.git` leads outside it. */
export function findRepo(cwd: string): RepoInfo | null {
  const r = locateRepo(cwd);
  return r === null || isRefusal(r) ? null : r;
}
