// git's `safe.directory` rule, kept by the client itself: a checkout that belongs to another account is not
// read and no git runs in it, unless the user's own git config lists it. git applies the rule only when it
// finds the repository itself; the client hands git the folder explicitly (--git-dir), so the check is ours.
import { lstatSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { homeOf, type Io } from '../io';
import { configValues } from './config-file';
import type { RepoInfo } from './locate';

/** The user's global git config files, as git reads them (GIT_CONFIG_GLOBAL, else XDG then ~/.gitconfig). */
function globalConfigTexts(env: Io['env']): string[] {
  const home = homeOf(env);
  const files = env.GIT_CONFIG_GLOBAL
    ? [resolve(env.GIT_CONFIG_GLOBAL)]
    : [join(env.XDG_CONFIG_HOME || join(home, '.config'), 'git', 'config'), join(home, '.gitconfig')];
  return files.flatMap((f) => {
    // The user's own files, not the repository's: a link there is theirs (dotfile managers make them).
    try {
      return [readFileSync(f, 'utf8')];
    } catch {
      return [];
    }
  });
}

/** `safe.directory` values of the user's global config; an empty value clears the ones before it, as in git. */
export function safeDirectories(env: Io['env']): string[] {
  let list: string[] = [];
  for (const text of globalConfigTexts(env))
    for (const v of configValues(text, 'safe', 'directory')) list = v === '' ? [] : [...list, v];
  return list;
}

const trimSlash = (p: string) => (p.length > 1 ? p.replace(/\/+$/, '') : p);

/** Whether the user's git config trusts `root` (`*`, the exact path, `~/…`, or a `prefix/*`). */
function listedSafe(root: string, env: Io['env']): boolean {
  const home = homeOf(env);
  const r = trimSlash(root);
  return safeDirectories(env).some((raw) => {
    if (raw === '*') return true;
    const v = trimSlash(raw.startsWith('~/') ? join(home, raw.slice(2)) : raw);
    if (v.endsWith('/*')) return r.startsWith(v.slice(0, -1));
    return v === r;
  });
}

/**
 * null when the checkout is the user's (its folder, `.git` and git folders owned by this account), or listed in
 * their `safe.directory`; else the reason, for the user. Not checked where there are no uids (Windows).
 */
export function ownershipRefusal(repo: RepoInfo, env: Io['env']): string | null {
  if (typeof process.getuid !== 'function') return null;
  const uid = process.getuid();
  for (const p of [repo.root, join(repo.root, '.git'), repo.gitDir, repo.commonDir]) {
    let owner: number;
    try {
      owner = lstatSync(p).uid;
    } catch {
      continue;
    }
    if (owner === uid) continue;
    if (listedSafe(repo.root, env)) return null;
    return `${p} belongs to another account (uid ${owner}); like git, cairn does not read it. If you trust it: git config --global --add safe.directory ${repo.root}`;
  }
  return null;
}
