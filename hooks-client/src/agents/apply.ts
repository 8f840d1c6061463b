// Applying and reverting FileEdits with one backup per file, recorded in cairn's config folder. Every read and
// write goes through util/safe-write.ts: no link is followed (a repository can ship one where the backup goes),
// nothing outside the edit's folder is touched, modes are kept (a file holding a secret is made owner-only),
// backups are owner-only.
import { lstatSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Paths } from '../config';
import type { Io } from '../io';
import {
  ensurePrivateDir,
  PRIVATE_FILE,
  safeReadFile,
  safeUnlink,
  safeWriteFile,
  UnsafePathError,
} from '../util/safe-write';
import type { FileEdit } from './file-edit';

interface InstallRecord {
  /** Per file we changed: where its pre-cairn copy is, and whether it existed at all. */
  files: Record<string, { backup: string | null; existed: boolean }>;
}

const recordFile = (paths: Paths) => join(paths.configDir, 'install.json');

function readRecord(paths: Paths): InstallRecord {
  try {
    return JSON.parse(safeReadFile(recordFile(paths)) ?? '') as InstallRecord;
  } catch {
    return { files: {} };
  }
}

function writeRecord(paths: Paths, record: InstallRecord): void {
  ensurePrivateDir(paths.configDir);
  safeWriteFile(recordFile(paths), `${JSON.stringify(record, null, 2)}\n`);
}

/** The folder an edit's files must stay in: the edit's own, or the wider one it names (a project's root). */
const within = (edit: FileEdit) => ({ root: edit.root ?? dirname(edit.path) });

/** The backup of an edited file: beside it, owner-only. */
const backupOf = (path: string) => `${path}.cairn-backup`;

/** Refusals name the path: nothing was written through it. */
function refused(io: Io, e: unknown): boolean {
  if (!(e instanceof UnsafePathError)) throw e;
  io.err(`cairn: ${e.message}\n`);
  return false;
}

/** Lines of `after` that `before` does not have, marked "+", and the reverse marked "-". */
function describeChange(before: string, after: string): string {
  const a = new Set(before.split('\n'));
  const b = new Set(after.split('\n'));
  const added = after
    .split('\n')
    .filter((l) => !a.has(l))
    .map((l) => `+ ${l}`);
  const removed = before
    .split('\n')
    .filter((l) => !b.has(l))
    .map((l) => `- ${l}`);
  return [...removed, ...added].join('\n');
}

/** Computes every new text first, so one unreadable file means nothing is changed. Returns false then. */
export function applyEdits(edits: FileEdit[], io: Io, paths: Paths, dry: boolean): boolean {
  const planned: Array<{ edit: FileEdit; before: string | null; after: string }> = [];
  for (const edit of edits) {
    let before: string | null;
    try {
      before = safeReadFile(edit.path, within(edit));
      // A link (or a folder) where the backup goes is refused before anything is written.
      safeReadFile(backupOf(edit.path), within(edit));
    } catch (e) {
      if (e instanceof UnsafePathError) return refused(io, e);
      io.err(`cairn: ${edit.path} could not be read (${(e as Error).message}); nothing changed.\n`);
      return false;
    }
    try {
      planned.push({ edit, before, after: edit.add(before) });
    } catch (e) {
      io.err(`cairn: ${edit.path} could not be read (${(e as Error).message}); nothing changed.\n`);
      return false;
    }
  }
  if (dry) {
    for (const { edit, before, after } of planned) {
      io.out(
        `${edit.path}${before === null ? ' (new file)' : ''}:\n${describeChange(before ?? '', after) || '(no change)'}\n\n`,
      );
    }
    return true;
  }
  const record = readRecord(paths);
  try {
    for (const { edit, before, after } of planned) {
      const secret = edit.secret?.(after) === true;
      const tighten = secret && readableByOthers(edit.path);
      if (before === after && !tighten) continue;
      if (!record.files[edit.path]) {
        // Back up the user's own version once; a re-install must not overwrite it with one holding our entries.
        const backup = before === null ? null : backupOf(edit.path);
        if (backup) safeWriteFile(backup, before!, { ...within(edit), mode: 0o600, exactMode: true });
        record.files[edit.path] = { backup, existed: before !== null };
      }
      safeWriteFile(edit.path, after, secret ? { ...within(edit), mode: PRIVATE_FILE, exactMode: true } : within(edit));
      const backup = record.files[edit.path]!.backup;
      const owner = tighten ? '; now readable by you only: it holds the sender’s secret' : '';
      io.out(
        `cairn: updated ${edit.path}${backup || owner ? ` (${[backup ? `backup: ${backup}` : '', owner.slice(2)].filter(Boolean).join('; ')})` : ''}\n`,
      );
    }
  } catch (e) {
    // What was written is recorded, so uninstall can still take it out.
    writeRecord(paths, record);
    return refused(io, e);
  }
  writeRecord(paths, record);
  return true;
}

export function revertEdits(edits: FileEdit[], io: Io, paths: Paths): void {
  const record = readRecord(paths);
  for (const edit of edits) {
    try {
      if (revertOne(edit, record, io)) io.out(`cairn: removed cairn from ${edit.path}\n`);
    } catch (e) {
      if (!(e instanceof UnsafePathError)) throw e;
      io.err(`cairn: ${e.message} It was left as is.\n`);
    }
  }
  writeRecord(paths, record);
}

/** Takes cairn out of one file; true when the file changed. Links are refused, never read or written through. */
function revertOne(edit: FileEdit, record: InstallRecord, io: Io): boolean {
  const before = safeReadFile(edit.path, within(edit));
  if (before === null) return false;
  let cleaned: string;
  try {
    cleaned = edit.remove(before);
  } catch (e) {
    io.err(`cairn: ${edit.path} could not be read (${(e as Error).message}); left as is.\n`);
    return false;
  }
  const rec = record.files[edit.path];
  // Only the backup cairn made, where it made it: a recorded path elsewhere (an edited install record) is not read.
  const backupText = rec?.backup === backupOf(edit.path) ? safeReadFile(rec.backup, within(edit)) : null;
  let sameConfig = false;
  try {
    sameConfig = backupText !== null && edit.same(cleaned, backupText);
  } catch {
    // a backup that is not the file's format any more is not restored
  }
  if (sameConfig) {
    safeWriteFile(edit.path, backupText!, within(edit)); // nothing else changed since install: the user's bytes come back exactly
    safeUnlink(rec!.backup!, within(edit));
  } else if (rec && !rec.existed && edit.empty(cleaned)) {
    safeUnlink(edit.path, within(edit));
  } else if (cleaned !== before) {
    safeWriteFile(edit.path, cleaned, within(edit));
  } else {
    return false;
  }
  delete record.files[edit.path];
  return true;
}

/** Whether a file exists with any group or other permission bit (POSIX; always false on Windows). */
function readableByOthers(path: string): boolean {
  if (process.platform === 'win32') return false;
  try {
    return (lstatSync(path).mode & 0o077) !== 0;
  } catch {
    return false;
  }
}
