// Pure file-history logic: path candidates, one row per session, specificity scoring, and the text block.
import type { FileHistoryRow } from './records';
import { clockOf, dayAndClock, dayOf, safeLine } from './format';
import { iconFor, type RecallMode } from './mode';
import { DATA_NOTICE } from '#shared/fence';
import { by, CONTEXT_CLOSE, CONTEXT_OPEN, evidenceTag } from './render-context';

export const FILE_CONTEXT_TOP = 15;

/** `a\b//./c/` → `a/b/c`: separators unified, `.` segments and doubled or trailing slashes dropped. */
export function normalizePath(p: string): string {
  const unified = p.trim().replace(/\\/g, '/');
  const absolute = unified.startsWith('/');
  const segs = unified.split('/').filter((s) => s && s !== '.');
  return (absolute ? '/' : '') + segs.join('/');
}

/**
 * Every spelling a stored path may have for the given paths: as given, and — when `cwd` is known —
 * relative to it (for absolute input) or joined onto it (for relative input). `relative` lists the
 * project-relative forms, which is what the observer records and what scoring compares against.
 */
export function pathCandidates(paths: string[], cwd?: string): { all: string[]; relative: string[] } {
  const root = cwd ? normalizePath(cwd) : '';
  const all = new Set<string>();
  const relative = new Set<string>();
  for (const raw of paths) {
    const p = normalizePath(raw);
    if (!p) continue;
    all.add(p);
    if (p.startsWith('/')) {
      if (root.startsWith('/') && p.startsWith(`${root}/`)) {
        const rel = p.slice(root.length + 1);
        all.add(rel);
        relative.add(rel);
      }
    } else {
      relative.add(p);
      if (root.startsWith('/')) all.add(`${root}/${p}`);
    }
  }
  return { all: [...all], relative: [...relative] };
}

export interface ScoredRow extends FileHistoryRow {
  score: number;
}

/**
 * Newest row per session, scored by how specifically it is about the file: +2 when the file was modified,
 * +2 when the observation touched at most 3 files (+1 for at most 8). Stable sort by score, top 15.
 */
export function scoreFileHistory(rows: FileHistoryRow[], candidates: string[], top = FILE_CONTEXT_TOP): ScoredRow[] {
  const newestFirst = [...rows].sort((a, b) => b.createdAt - a.createdAt || b.id - a.id);
  const seen = new Set<number>();
  const wanted = new Set(candidates.map(normalizePath));
  const scored: ScoredRow[] = [];
  for (const r of newestFirst) {
    if (seen.has(r.sessionId)) continue;
    seen.add(r.sessionId);
    let score = 0;
    if (r.filesModified.some((f) => wanted.has(normalizePath(f)))) score += 2;
    const touched = new Set([...r.filesRead, ...r.filesModified]).size;
    if (touched <= 3) score += 2;
    else if (touched <= 8) score += 1;
    scored.push({ ...r, score });
  }
  return scored
    .map((r, i) => ({ r, i }))
    .sort((a, b) => b.r.score - a.r.score || a.i - b.i)
    .slice(0, top)
    .map(({ r }) => r);
}

/** True when the file on disk changed after the newest observation of it: the history may be stale. */
export const changedSince = (rows: FileHistoryRow[], mtime: number | undefined) =>
  mtime !== undefined && rows.length > 0 && mtime > Math.max(...rows.map((r) => r.createdAt));

export interface FileContextInput {
  path: string;
  rows: ScoredRow[];
  mode: RecallMode;
  viewer: string;
  now: number;
  timeZone: string;
}

/** The block injected before a Read; empty string when there is nothing worth saying. */
export function renderFileContext(input: FileContextInput): string {
  const { rows, mode, timeZone } = input;
  if (!rows.length) return '';
  const sessions = rows.length === 1 ? 'one earlier session' : `${rows.length} earlier sessions`;
  const out = [
    CONTEXT_OPEN,
    `cairn has notes on ${input.path} from ${sessions} (as of ${dayAndClock(input.now, timeZone)} ${timeZone}).`,
    'They add to the Read result, which still shows the current file in full.',
    DATA_NOTICE,
  ];
  const chrono = [...rows].sort((a, b) => a.createdAt - b.createdAt || a.id - b.id);
  let day = '';
  for (const r of chrono) {
    const d = dayOf(r.createdAt, timeZone);
    if (d !== day) {
      out.push(`## ${d}`);
      day = d;
    }
    const who = by(input.viewer, r.author, r.device);
    out.push(
      `${r.id} ${clockOf(r.createdAt, timeZone)} ${iconFor(mode, r.type)} ${safeLine(r.title, 160, 'Untitled')}${evidenceTag(r.evidence)}${who}`,
    );
  }
  out.push(
    `Full records: get_observations([${chrono.map((r) => r.id).join(', ')}]) (roughly 300 tokens each).`,
    CONTEXT_CLOSE,
  );
  return out.join('\n');
}
