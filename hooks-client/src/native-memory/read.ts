// Reading Claude Code's auto memory for a checkout: the one place the client reads outside a checkout (under the
// user's home, docs/threat-model.md). The same safe reads as a repository's files (repo/read.ts): no link is
// followed on the way from Claude Code's config folder (each folder lstat'ed, each file opened O_NOFOLLOW and checked
// to be the file lstat saw), sizes capped, nothing run. What it holds is data for cairn, never instructions.
import { lstatSync, readdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { claudeConfigDir } from '../agents/claude-code';
import type { Io } from '../io';
import { locateRepo } from '../repo/locate';
import { pathSegments, readRegularFile } from '../repo/read';
import { claudeProjectSlug, nativeFacts, type NativeFact } from './format';

/** Claude Code's scan lists at most 200 memories; cairn reads no more. */
export const TOPICS_MAX = 200;
/** Claude Code's server refuses a memory past 102,400 bytes; the index is far smaller. */
export const FILE_MAX_BYTES = 102_400;

export interface NativeMemory {
  /** The memory folder (shown to the user). */
  dir: string;
  facts: NativeFact[];
  /** Files there that were not read: links, or anything but a regular file. */
  refused: string[];
}

/** Whether every component of `root/rel` is a real folder (no link); the root itself is taken by its real path. */
function realFolder(root: string, rel: string): string | null {
  const parts = pathSegments(rel);
  if (!parts) return null;
  let path: string;
  try {
    path = realpathSync.native(root);
  } catch {
    return null;
  }
  for (const p of parts) {
    path = join(path, p);
    try {
      if (!lstatSync(path).isDirectory()) return null;
    } catch {
      return null;
    }
  }
  return path;
}

/**
 * The folder Claude Code names a project's memory after: for a linked git worktree the main checkout's (the CLI's
 * canonical root: a `.git` file's gitdir under `<common>/worktrees/`, checked back, gives `dirname(<common>)` when
 * `<common>` is a `.git` folder), so every worktree of a repository shares one memory; else `root` itself.
 */
export function claudeProjectBase(root: string): string {
  const repo = locateRepo(root);
  return repo && !('refused' in repo) && repo.root === root ? repo.mainRoot : root;
}

/**
 * Claude Code's auto memory for the project whose root is `root`, or null when there is none (no folder, a link
 * on the way, or a root past the CLI's slug cut).
 */
export function readNativeMemory(env: Io['env'], home: string, root: string): NativeMemory | null {
  const slug = claudeProjectSlug(claudeProjectBase(root));
  if (!slug) return null;
  const config = claudeConfigDir(env, home);
  const rel = `projects/${slug}/memory`;
  const dir = realFolder(config, rel);
  if (!dir) return null;
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => n.endsWith('.md'))
      .sort();
  } catch {
    return null;
  }
  const refused: string[] = [];
  const read = (name: string): string | null => {
    const buf = readRegularFile(dir, name, FILE_MAX_BYTES, dir);
    if (buf === null) refused.push(name);
    return buf === null ? null : buf.toString('utf8');
  };
  const index = names.includes('MEMORY.md') ? read('MEMORY.md') : null;
  const topics = new Map<string, string>();
  for (const name of names.filter((n) => n !== 'MEMORY.md').slice(0, TOPICS_MAX)) {
    const text = read(name);
    if (text !== null) topics.set(name, text);
  }
  return { dir: join(config, rel), facts: nativeFacts(index, topics), refused };
}
