// `cairn prime` (and /cairn:prime): a project's first memory from its repository — the docs' outlines, the
// recent commits with the files they touched, open TODO lines — sent to POST /api/prime a few notes a request.
// Reads only what git tracks, never sends a file's contents (extract.ts keeps short excerpts, redacted), honours
// CAIRN_EXCLUDE_PROJECTS and /cairn:pause, and is safe to repeat: the server stores a note once.
import { readdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { isPathExcluded } from '#shared/glob';
import { loadConfig, loggedInConfig, pathsFor } from '../config';
import type { Io } from '../io';
import { call, errorText, Unreachable } from '../net/http';
import { isSensitivePath } from '../privacy/sensitive-files';
import { computeProjectKey } from '../project/project-key';
import type { RepoInfo } from '../repo/locate';
import { runGit } from '../repo/git';
import { readRegularFile } from '../repo/read';
import { openRepo, trackedFiles } from '../repo/tracked';
import { leftText, pausedAt, readPauses } from '../status/local';
import {
  CAPS,
  commitNote,
  docNote,
  GIT_LOG_FORMAT,
  NOT_SCANNED,
  parseGitLog,
  pickDocs,
  todoLines,
  todoNote,
  type PrimeNote,
} from '../prime/extract';

const USAGE =
  'usage: cairn prime [--dry-run]\n       notes from this repository’s docs headings, recent commits and open TODOs\n';
/** The server's PRIME_NOTES_PER_REQUEST. */
const PER_REQUEST = 10;
/** Reading bounds: a doc, a scanned file, files scanned, bytes read by the TODO scan. */
const DOC_BYTES = 512 * 1024;
const SCAN_FILE_BYTES = 256 * 1024;
const SCAN_FILES = 4_000;
const SCAN_BYTES = 16 * 1024 * 1024;

/**
 * At most `max` bytes of the regular file `root/rel` as UTF-8, or null (missing, a link or under one, not a regular
 * file, binary: a NUL early on). A committed `README.md -> ~/.ssh/config` is a link: never read.
 */
function readHead(root: string, rel: string, max: number): string | null {
  const head = readRegularFile(root, rel, max);
  if (head === null || head.subarray(0, 8_000).includes(0)) return null;
  return head.toString('utf8');
}

/** Bounds of the one `git log` prime runs. */
const GIT_TIMEOUT_MS = 15_000;
const GIT_MAX_BYTES = 32 * 1024 * 1024;

/**
 * The notes of a checkout the client may read (repo/: tracked regular files only, git hardened), or of a folder
 * outside git (its README only). Without a working git, a checkout gives its README too.
 */
export function gatherNotes(
  at: { repo: RepoInfo } | { root: string },
  env: Io['env'],
): {
  notes: PrimeNote[];
  counts: Record<'docs' | 'commits' | 'todos', number>;
  scanned: number;
} {
  const repo = 'repo' in at ? at.repo : null;
  const root = repo ? repo.root : (at as { root: string }).root;
  const listed = repo ? trackedFiles(repo, env) : null;
  const tracked = listed ?? readdirSync(root).filter((n) => /^readme/i.test(n));
  const docs = pickDocs(tracked)
    .filter((p) => !isSensitivePath(p))
    .flatMap((p) => {
      const text = readHead(root, p, DOC_BYTES);
      const note = text === null ? null : docNote(p, text);
      return note ? [note] : [];
    });
  const log =
    repo && listed !== null
      ? runGit(repo, {
          args: [
            'log',
            '-n',
            String(CAPS.commits),
            '--no-merges',
            '--no-color',
            '--no-show-signature',
            '--no-mailmap',
            '--no-ext-diff',
            '--no-textconv',
            GIT_LOG_FORMAT,
            '--name-only',
            '--',
          ],
          env,
          timeoutMs: GIT_TIMEOUT_MS,
          maxBytes: GIT_MAX_BYTES,
        })
      : null;
  const commits = log === null ? [] : parseGitLog(log).map(commitNote);
  const todos: { note: PrimeNote; total: number }[] = [];
  let scanned = 0;
  let bytes = 0;
  for (const p of listed === null ? [] : tracked) {
    if (scanned >= SCAN_FILES || bytes >= SCAN_BYTES) break;
    if (NOT_SCANNED.test(p) || isSensitivePath(p)) continue;
    const text = readHead(root, p, SCAN_FILE_BYTES);
    if (text === null) continue;
    scanned++;
    bytes += text.length;
    const found = todoLines(text);
    const note = todoNote(p, found);
    if (note) todos.push({ note, total: found.total });
  }
  // The files with the most open TODOs first (then by path): the caps keep the busiest.
  todos.sort((a, b) => b.total - a.total || a.note.files[0]!.localeCompare(b.note.files[0]!));
  const todoNotes = todos.slice(0, CAPS.todoFiles).map((t) => t.note);
  return {
    notes: [...docs, ...commits, ...todoNotes],
    counts: { docs: docs.length, commits: commits.length, todos: todoNotes.length },
    scanned,
  };
}

export async function prime(args: string[], io: Io): Promise<number> {
  let dryRun = false;
  try {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { 'dry-run': { type: 'boolean' } },
    });
    if (positionals.filter((p) => p.trim()).length) throw new Error('unexpected arguments');
    dryRun = values['dry-run'] === true;
  } catch {
    io.err(USAGE);
    return 2;
  }
  const paths = pathsFor(io.env);
  const config = loadConfig(io.env, paths);
  const { key, root } = computeProjectKey(io.cwd);
  if (
    config.excludeProjects.length &&
    (isPathExcluded(io.cwd, config.excludeProjects, paths.home) ||
      isPathExcluded(key, config.excludeProjects, paths.home))
  ) {
    io.err(`cairn prime: ${key} is excluded from memory (CAIRN_EXCLUDE_PROJECTS); nothing sent.\n`);
    return 1;
  }
  const paused = pausedAt(readPauses(paths.stateDir), null, io.cwd, io.now());
  if (paused) {
    io.err(
      `cairn prime: recording is paused for the folder ${paused.folder ?? io.cwd} (${leftText(paused.until, io.now())}); nothing sent. Resume with /cairn:resume folder or \`cairn resume\`.\n`,
    );
    return 1;
  }
  const opened = openRepo(io.cwd, io.env);
  if (opened && 'refused' in opened) {
    io.err(`cairn prime: ${opened.root} is not read: ${opened.refused}. Nothing sent.\n`);
    return 1;
  }
  const { notes, counts, scanned } = gatherNotes(opened ?? { root }, io.env);
  const what = `${notes.length} notes from ${key} (${counts.docs} docs outlines, ${counts.commits} commits, ${counts.todos} files with TODOs; ${scanned} files scanned)`;
  if (dryRun) {
    io.out(`cairn prime --dry-run: would send ${what}:\n`);
    for (const n of notes) io.out(`\n[${n.kind}] ${n.title}\n${n.text}\n`);
    return 0;
  }
  if (!notes.length) {
    io.out(`cairn prime: nothing to prime in ${root} (no docs headings, commits or TODOs found).\n`);
    return 0;
  }
  const logged = loggedInConfig(io, paths);
  if (!logged) return 1;
  let stored = 0;
  let duplicates = 0;
  for (let i = 0; i < notes.length; i += PER_REQUEST) {
    try {
      const r = await call(logged.url, '/api/prime', {
        token: logged.token,
        device: logged.device,
        body: { project: key, notes: notes.slice(i, i + PER_REQUEST) },
        timeoutMs: 30_000,
      });
      if (r.status !== 200) {
        io.err(`cairn prime: ${errorText(r)}${stored ? ` (${stored} notes were stored before this)` : ''}\n`);
        return 1;
      }
      const answer = JSON.parse(r.text) as { stored?: unknown[]; duplicates?: number };
      stored += answer.stored?.length ?? 0;
      duplicates += answer.duplicates ?? 0;
    } catch (e) {
      io.err(`cairn prime: server not reachable (${e instanceof Unreachable ? e.reason : String(e)})\n`);
      return 1;
    }
  }
  io.out(
    `cairn: primed ${what}: ${stored} stored, ${duplicates} already in memory. They show as [primed] in the index.\n`,
  );
  return 0;
}
