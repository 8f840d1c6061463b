// Which project a folder belongs to: read from .git on disk (no `git` process), cached per cwd in the state dir.
import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { localKey, normaliseRemote } from './remote';
import { ensurePrivateDir, safeWriteFile } from '../util/safe-write';

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
}

/** A file's text, or null when it cannot be read (absent, a folder, no permission). */
export const readText = (p: string): string | null => {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return null;
  }
};

/** Finds the repository enclosing `cwd`, following worktree and submodule `.git` files. */
export function findRepo(cwd: string): RepoInfo | null {
  let dir = resolve(cwd);
  for (let i = 0; i < 64; i++) {
    const dotGit = join(dir, '.git');
    let gitDir: string | null = null;
    try {
      const st = statSync(dotGit);
      if (st.isDirectory()) gitDir = dotGit;
      else if (st.isFile()) {
        const m = /^gitdir:\s*(.+)$/m.exec(readText(dotGit) ?? '');
        if (m) gitDir = resolve(dir, m[1]!.trim());
      }
    } catch {
      // not here; keep walking up
    }
    if (gitDir) {
      const common = readText(join(gitDir, 'commondir'))?.trim();
      const commonDir = common ? (isAbsolute(common) ? common : resolve(gitDir, common)) : gitDir;
      const mainRoot = basename(commonDir) === '.git' ? dirname(commonDir) : dir;
      return { mainRoot, root: dir, configPath: join(commonDir, 'config'), gitDir, commonDir };
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
  return null;
}

/** The URL of `origin`, else of the first remote, from a git config file's text. */
export function remoteFromConfig(text: string): string | null {
  const remotes: Array<{ name: string; url: string }> = [];
  let current: string | null = null;
  for (const line of text.split(/\r?\n/)) {
    const section = /^\s*\[\s*remote\s+"([^"]+)"\s*\]/.exec(line);
    if (section) {
      current = section[1]!;
      continue;
    }
    if (/^\s*\[/.test(line)) current = null;
    const url = current ? /^\s*url\s*=\s*(.+?)\s*$/.exec(line) : null;
    if (url && current) remotes.push({ name: current, url: url[1]!.replace(/^"(.*)"$/, '$1') });
  }
  return (remotes.find((r) => r.name === 'origin') ?? remotes[0])?.url ?? null;
}

export interface ProjectIdentity {
  /** The project key every clone shares (`github.com/acme/widgets`, `local/<folder>`). */
  key: string;
  /** Where the project's files start on this machine: the git top level, or cwd outside a repository. */
  root: string;
}

export function computeProjectKey(cwd: string): ProjectIdentity & { configPath: string | null } {
  // A path this OS cannot resolve (a Windows path seen on POSIX) names no repository here.
  if (!isAbsolute(cwd)) return { key: localKey(cwd), root: cwd, configPath: null };
  const repo = findRepo(cwd);
  if (!repo) return { key: localKey(cwd), root: cwd, configPath: null };
  const remote = remoteFromConfig(readText(repo.configPath) ?? '');
  return {
    key: (remote && normaliseRemote(remote)) || localKey(repo.mainRoot),
    root: repo.root,
    configPath: repo.configPath,
  };
}

interface CacheEntry {
  key: string;
  /** Absent in caches written by older clients: such an entry is recomputed. */
  root?: string;
  configPath: string | null;
  mtimeMs: number | null;
  checkedAt: number;
}

const NO_REPO_TTL_MS = 10 * 60_000;
const MAX_ENTRIES = 500;

/** The project key for `cwd`, from the cache when the git config it came from has not changed. */
export function projectKeyFor(cwd: string, stateDir: string, now: number): string {
  return projectFor(cwd, stateDir, now).key;
}

/** Key and root for `cwd`, cached like the key (the common path reads one small file and stats one). */
export function projectFor(cwd: string, stateDir: string, now: number): ProjectIdentity {
  const cacheFile = join(stateDir, 'projects.json');
  let cache: Record<string, CacheEntry> = {};
  try {
    cache = JSON.parse(readFileSync(cacheFile, 'utf8')) as Record<string, CacheEntry>;
  } catch {
    // no cache yet
  }
  const hit = cache[cwd];
  if (hit && typeof hit.root === 'string') {
    if (hit.configPath === null && now - hit.checkedAt < NO_REPO_TTL_MS) return { key: hit.key, root: hit.root };
    if (hit.configPath !== null && mtimeOf(hit.configPath) === hit.mtimeMs) return { key: hit.key, root: hit.root };
  }
  const fresh = computeProjectKey(cwd);
  cache[cwd] = {
    key: fresh.key,
    root: fresh.root,
    configPath: fresh.configPath,
    mtimeMs: fresh.configPath ? mtimeOf(fresh.configPath) : null,
    checkedAt: now,
  };
  const keys = Object.keys(cache);
  if (keys.length > MAX_ENTRIES) for (const k of keys.slice(0, keys.length - MAX_ENTRIES)) delete cache[k];
  try {
    ensurePrivateDir(stateDir);
    safeWriteFile(cacheFile, JSON.stringify(cache));
  } catch {
    // a cache we cannot write only costs a few stat calls next time
  }
  return { key: fresh.key, root: fresh.root };
}

function mtimeOf(p: string): number | null {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return null;
  }
}
