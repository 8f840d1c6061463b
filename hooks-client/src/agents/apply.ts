// Applying and reverting FileEdits with one backup per file, recorded in cairn's config folder.
import { existsSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Paths } from '../config';
import type { Io } from '../io';
import type { FileEdit } from './file-edit';

interface InstallRecord {
  /** Per file we changed: where its pre-cairn copy is, and whether it existed at all. */
  files: Record<string, { backup: string | null; existed: boolean }>;
}

const recordFile = (paths: Paths) => join(paths.configDir, 'install.json');

function readRecord(paths: Paths): InstallRecord {
  try {
    return JSON.parse(readFileSync(recordFile(paths), 'utf8')) as InstallRecord;
  } catch {
    return { files: {} };
  }
}

export function writeAtomic(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

export const readMaybe = (p: string): string | null => (existsSync(p) ? readFileSync(p, 'utf8') : null);

/** Lines of `after` that `before` does not have, marked "+", and the reverse marked "-". */
function describeChange(before: string, after: string): string {
  const a = new Set(before.split('\n'));
  const b = new Set(after.split('\n'));
  const added = after.split('\n').filter((l) => !a.has(l)).map((l) => `+ ${l}`);
  const removed = before.split('\n').filter((l) => !b.has(l)).map((l) => `- ${l}`);
  return [...removed, ...added].join('\n');
}

/** Computes every new text first, so one unreadable file means nothing is changed. Returns false then. */
export function applyEdits(edits: FileEdit[], io: Io, paths: Paths, dry: boolean): boolean {
  const planned: Array<{ edit: FileEdit; before: string | null; after: string }> = [];
  for (const edit of edits) {
    const before = readMaybe(edit.path);
    try {
      planned.push({ edit, before, after: edit.add(before) });
    } catch (e) {
      io.err(`cairn: ${edit.path} could not be read (${(e as Error).message}); nothing changed.\n`);
      return false;
    }
  }
  if (dry) {
    for (const { edit, before, after } of planned) {
      io.out(`${edit.path}${before === null ? ' (new file)' : ''}:\n${describeChange(before ?? '', after) || '(no change)'}\n\n`);
    }
    return true;
  }
  const record = readRecord(paths);
  for (const { edit, before, after } of planned) {
    if (before === after) continue;
    if (!record.files[edit.path]) {
      // Back up the user's own version once; a re-install must not overwrite it with one holding our entries.
      const backup = before === null ? null : `${edit.path}.cairn-backup`;
      if (backup) writeFileSync(backup, before!);
      record.files[edit.path] = { backup, existed: before !== null };
    }
    writeAtomic(edit.path, after);
    const backup = record.files[edit.path]!.backup;
    io.out(`cairn: updated ${edit.path}${backup ? ` (backup: ${backup})` : ''}\n`);
  }
  writeAtomic(recordFile(paths), `${JSON.stringify(record, null, 2)}\n`);
  return true;
}

export function revertEdits(edits: FileEdit[], io: Io, paths: Paths): void {
  const record = readRecord(paths);
  for (const edit of edits) {
    const before = readMaybe(edit.path);
    if (before === null) continue;
    let cleaned: string;
    try {
      cleaned = edit.remove(before);
    } catch (e) {
      io.err(`cairn: ${edit.path} could not be read (${(e as Error).message}); left as is.\n`);
      continue;
    }
    const rec = record.files[edit.path];
    const backupText = rec?.backup ? readMaybe(rec.backup) : null;
    if (backupText !== null && edit.same(cleaned, backupText)) {
      writeAtomic(edit.path, backupText); // nothing else changed since install: the user's bytes come back exactly
      unlinkSync(rec!.backup!);
    } else if (rec && !rec.existed && edit.empty(cleaned)) {
      unlinkSync(edit.path);
    } else if (cleaned !== before) {
      writeAtomic(edit.path, cleaned);
    } else {
      continue;
    }
    delete record.files[edit.path];
    io.out(`cairn: removed cairn from ${edit.path}\n`);
  }
  writeAtomic(recordFile(paths), `${JSON.stringify(record, null, 2)}\n`);
}
