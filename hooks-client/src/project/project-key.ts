// Which project a folder belongs to: read from .git on disk (no `git` process; repo/locate.ts finds and checks
// the repository), cached per cwd in the state dir.
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { findRepo, readGitFile } from '../repo/locate';
import { localKey, normaliseRemote } from './remote';
import { ensurePrivateDir, safeWriteFile } from '../util/safe-write';

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
  const remote = remoteFromConfig(readGitFile(repo.real.commonDir, 'config', repo.real.commonDir) ?? '');
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
