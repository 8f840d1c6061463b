// The branch and HEAD commit of a checkout, read from its .git files (no `git` process: this runs on every
// event), and at SessionStart the recent history, from one bounded `git rev-list` (repo/git.ts: hardened, no
// shell, a timeout; only in a checkout the user owns).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { HISTORY_ABBREV, isBranchName, isCommitId, MAX_HISTORY_COMMITS, type GitView } from '#shared/git';
import type { Io } from '../io';
import { runGitAsync } from '../repo/git';
import { findRepo, readGitFile, type RepoInfo } from '../repo/locate';
import { ownershipRefusal } from '../repo/trust';

export interface GitHead {
  /** null: detached HEAD, or a name outside the shared rule (then nothing is sent). */
  branch: string | null;
  /** null: a branch with no commit yet, or refs this reader does not understand (reftable). */
  commit: string | null;
}

type Dirs = Pick<RepoInfo, 'real'>;

/** A ref's commit: loose file (the worktree's own folder, then the shared one), else packed-refs; symrefs followed. */
function resolveRef(dirs: Dirs, ref: string, depth = 0): string | null {
  if (depth > 4 || !/^refs\/[^\0\s]+$/.test(ref) || ref.includes('..')) return null;
  for (const dir of [dirs.real.gitDir, dirs.real.commonDir]) {
    const text = readGitFile(dir, ref, dir)?.trim();
    if (!text) continue;
    const sym = /^ref:\s*(\S+)$/.exec(text);
    if (sym) return resolveRef(dirs, sym[1]!, depth + 1);
    return isCommitId(text) ? text : null;
  }
  const packed = readGitFile(dirs.real.commonDir, 'packed-refs', dirs.real.commonDir) ?? '';
  for (const line of packed.split('\n')) {
    const sp = line.indexOf(' ');
    if (sp > 0 && line.slice(sp + 1).trimEnd() === ref) {
      const id = line.slice(0, sp);
      return isCommitId(id) ? id : null;
    }
  }
  return null;
}

function headOf(dirs: Dirs): GitHead | null {
  const text = readGitFile(dirs.real.gitDir, 'HEAD', dirs.real.gitDir)?.trim();
  if (!text) return null;
  if (isCommitId(text)) return { branch: null, commit: text };
  const sym = /^ref:\s*(refs\/heads\/(\S+))$/.exec(text);
  if (!sym) return null;
  const name = sym[2]!;
  // reftable repositories keep a placeholder here; their refs are not files.
  if (name === '.invalid') return null;
  return { branch: isBranchName(name) ? name : null, commit: resolveRef(dirs, sym[1]!) };
}

/** Branch and commit of the checkout holding `cwd`; null outside a repository. A few small file reads. */
export function readGitHead(cwd: string): GitHead | null {
  const repo = findRepo(cwd);
  return repo ? headOf(repo) : null;
}

/** The default branch: what origin/HEAD names, else a local main or master, with the commit it points at. */
function trunkOf(dirs: Dirs): { name: string; commit: string } | null {
  const originHead = /^ref:\s*refs\/remotes\/origin\/(\S+)$/.exec(
    readGitFile(dirs.real.commonDir, 'refs/remotes/origin/HEAD', dirs.real.commonDir)?.trim() ?? '',
  );
  const candidates = originHead ? [originHead[1]!] : ['main', 'master'];
  for (const name of candidates) {
    if (!isBranchName(name)) continue;
    const commit = resolveRef(dirs, `refs/remotes/origin/${name}`) ?? resolveRef(dirs, `refs/heads/${name}`);
    if (commit) return { name, commit };
  }
  return null;
}

export const HISTORY_TIMEOUT_MS = 1_500;

/**
 * Branch, HEAD, trunk and the newest MAX_HISTORY_COMMITS commits reachable from HEAD or the trunk (abbreviated):
 * what the server needs to tell merged work from work on branches that never merged. `git` gets only object ids
 * as arguments (no shell, nothing from the user's input); no git, a slow one or an error leave history empty.
 */
export async function readGitView(
  cwd: string,
  timeoutMs = HISTORY_TIMEOUT_MS,
  env: Io['env'] = process.env,
): Promise<GitView | null> {
  const repo = findRepo(cwd);
  const head = repo ? headOf(repo) : null;
  if (!repo || !head) return null;
  const trunk = trunkOf(repo);
  const starts = [...new Set([head.commit, trunk?.commit].filter((c): c is string => !!c))];
  // Another account's checkout: its files say branch and HEAD, but no git runs in it.
  const history = starts.length && !ownershipRefusal(repo, env) ? await revList(repo, starts, timeoutMs, env) : [];
  return { branch: head.branch, head: head.commit, trunk: trunk?.name ?? null, history };
}

async function revList(repo: RepoInfo, starts: string[], timeoutMs: number, env: Io['env']): Promise<string[]> {
  const out = await runGitAsync(repo, {
    args: ['rev-list', `--max-count=${MAX_HISTORY_COMMITS}`, ...starts, '--'],
    env,
    timeoutMs,
    maxBytes: 64 * 1024,
  });
  if (out === null) return [];
  return out
    .split('\n')
    .map((l) => l.trim())
    .filter(isCommitId)
    .map((c) => c.slice(0, HISTORY_ABBREV))
    .slice(0, MAX_HISTORY_COMMITS);
}

/**
 * Which of `names` exist in the checkout's repository as a local branch or a remote-tracking one (any remote), read
 * from ref files and packed-refs (no process). A name outside the shared branch rule is never looked up.
 */
export function branchesPresent(repo: Dirs, names: readonly string[]): Set<string> {
  const out = new Set<string>();
  const wanted = names.filter(isBranchName);
  if (!wanted.length) return out;
  const common = repo.real.commonDir;
  let remotes: string[] = [];
  try {
    remotes = readdirSync(join(common, 'refs', 'remotes')).filter((r) => isBranchName(r) && !r.includes('/'));
  } catch {
    // no remotes
  }
  // Packed refs: local branches by ref, remote-tracking ones by name (whichever remote).
  const packed = new Set<string>();
  const packedRemote = new Set<string>();
  for (const line of (readGitFile(common, 'packed-refs', common) ?? '').split('\n')) {
    const sp = line.indexOf(' ');
    if (sp <= 0 || line.startsWith('#') || line.startsWith('^')) continue;
    const ref = line.slice(sp + 1).trimEnd();
    packed.add(ref);
    const remote = /^refs\/remotes\/[^/]+\/(.+)$/.exec(ref);
    if (remote) packedRemote.add(remote[1]!);
  }
  for (const name of wanted) {
    const loose = [`refs/heads/${name}`, ...remotes.map((r) => `refs/remotes/${r}/${name}`)];
    if (
      packed.has(`refs/heads/${name}`) ||
      packedRemote.has(name) ||
      loose.some((ref) => isCommitId(readGitFile(common, ref, common)?.trim() ?? ''))
    )
      out.add(name);
  }
  return out;
}
