// Pure renderer of the caller's personal memory inside the context index: a small block, bounded in notes and
// characters, that follows its owner into every project (issue 36). Its text is fenced like every stored line.
import { heldMark } from './render-context';
import { safeLine } from './format';

export interface PersonalNote {
  id: number;
  createdAt: number;
  title: string | null;
  narrative: string | null;
  held?: string | null;
}

/** Notes read for the block at most, and what the block may take of the injection (the index keeps the rest). */
export const PERSONAL_NOTES_MAX = 20;
export const PERSONAL_CHARS_MAX = 1_500;
const NOTE_MAX = 160;

export const PERSONAL_HEADING = '## Yours: personal memory (every project; only you see it)';

/**
 * The block's lines, newest note first, within `PERSONAL_CHARS_MAX` characters (heading included); [] when there is
 * nothing to show. A note is its text on one line (a personal note is short: "I use pnpm").
 */
export function personalLines(notes: readonly PersonalNote[]): string[] {
  if (!notes.length) return [];
  const out = [PERSONAL_HEADING];
  let used = PERSONAL_HEADING.length + 1;
  for (const n of notes.slice(0, PERSONAL_NOTES_MAX)) {
    const text = safeLine(n.narrative?.trim() ? n.narrative : n.title, NOTE_MAX, 'Untitled');
    const line = `${n.id} ${text}${heldMark(n.held)}`;
    if (used + line.length + 1 > PERSONAL_CHARS_MAX) {
      out.push('… more in your personal memory: search(query) finds them');
      break;
    }
    out.push(line);
    used += line.length + 1;
  }
  return out;
}
