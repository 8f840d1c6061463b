// Evidence on the client (issue 34): the ids of the files a tool call read or changed, sent with its event; never
// a file's content, only ids computed here (src/project/blob-id.ts) and, for a changed file, the git index's id
// of it before the change. Files outside the project's git checkout and sensitive files send nothing.
import { lstatSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { pathInsideRoot } from '#shared/paths';
import { toolFiles } from '#shared/tool-files';
import { MAX_EVENT_FILE_IDS, type WireFileId } from '#shared/wire/events';
import type { Io } from '../io';
import { isSensitivePath } from '../privacy/sensitive-files';
import { indexBlobs } from '../repo/index-file';
import type { RepoInfo } from '../repo/locate';
import { pathSegments } from '../repo/read';
import { fileIdsUnder, openRepo, type FileRead } from '../repo/tracked';
import type { HookContext } from './context';

/** Files larger than this send no ids (their notes stay `unknown`): bounded time and memory per event. */
export const MAX_EVIDENCE_FILE_BYTES = 8 * 1024 * 1024;

/**
 * The checkout the project root is the top of, when the client may read it (repo/tracked.ts openRepo: its `.git`
 * stays inside it, the user owns it); null otherwise (not a repository, a folder inside one, refused).
 */
export function checkoutOf(projectRoot: string, env: Io['env']): RepoInfo | null {
  try {
    const opened = openRepo(projectRoot, env);
    return opened && 'repo' in opened && opened.repo.root === projectRoot ? opened.repo : null;
  } catch {
    return null;
  }
}

/** A path as the agent named it → root-relative, or null outside the root (or a path this reader refuses). */
export function relativePath(root: string, cwd: string, path: string): string | null {
  const abs = isAbsolute(path) || /^[A-Za-z]:[\\/]/.test(path) ? path : join(cwd || root, path);
  const rel = pathInsideRoot(root, abs);
  return rel && pathSegments(rel) && !isSensitivePath(rel) ? rel : null;
}

/**
 * The file's ids now (repo/tracked.ts fileIdsUnder: a regular file reached without a link, tracked or not, ≤ 8 MB):
 * null when nothing is there (absent, or its folder is); undefined when the client will not say (a link on the way,
 * not a regular file, too large, unreadable).
 */
export function readFileIds(repo: RepoInfo, rel: string, keep = false): FileRead | null | undefined {
  const read = fileIdsUnder(repo, rel, { ws: true, keep, maxBytes: MAX_EVIDENCE_FILE_BYTES });
  if (read) return read;
  try {
    lstatSync(join(repo.root, ...rel.split('/')));
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? null : undefined;
  }
}

/**
 * The ids of the files the call read or changed, as they are now (at most MAX_EVENT_FILE_IDS): `blob` null for a
 * file that is not there; `base` for a changed file, its id in the git index (null: not in it). Nothing when
 * evidence is off or the project is not a git checkout.
 */
export function eventFileIds(ctx: HookContext, toolName: string, toolInput: unknown): WireFileId[] | undefined {
  if (!ctx.config.evidence) return undefined;
  const repo = checkoutOf(ctx.projectRoot, ctx.io.env);
  if (!repo) return undefined;
  const named = toolFiles(toolName, toolInput);
  const rel = (paths: string[]) =>
    paths.map((p) => relativePath(repo.root, ctx.input.cwd, p)).filter((p): p is string => p !== null);
  const modified = new Set(rel(named.modified));
  const paths = [...new Set([...rel(named.read), ...modified])].slice(0, MAX_EVENT_FILE_IDS);
  if (!paths.length) return undefined;
  const bases = modified.size ? indexBlobs(repo, [...modified]) : null;
  const out: WireFileId[] = [];
  for (const path of paths) {
    const ids = readFileIds(repo, path);
    if (ids === undefined) continue;
    const id: WireFileId = ids ? { path, blob: ids.blob, ...(ids.ws ? { ws: ids.ws } : {}) } : { path, blob: null };
    if (modified.has(path) && bases) id.base = bases.get(path) ?? null;
    out.push(id);
  }
  return out.length ? out : undefined;
}
