// Inert text: what every string cairn stores is stripped of before it is stored, whatever path it came in by
// (ingest, MCP, import, prime, the observer's output), and what every reader strips again before showing it (the
// viewer; the context frame, MCP and search go further with src/shared/fence.ts). Control characters drive a
// terminal (ESC starts a colour, a cursor move, an OSC 52 clipboard write; BEL ends one; CR rewrites the line) and
// the bidi controls reorder what a screen shows (a right-to-left override makes `exe.txt` read `txt.exe`); none of
// them means anything in memory. Pure and linear: two single-pass replacements.

// C0 controls but tab and newline (CR is folded into a newline first), DEL, C1 controls, and the bidi controls:
// the embeddings and overrides (U+202A–U+202E), the isolates (U+2066–U+2069) and the three marks (LRM, RLM, ALM).
// Joiners (ZWJ, ZWNJ) stay: Persian, Indic scripts and emoji sequences need them.
const STRIP = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
// Line ends a reader may see as a newline: CR LF, a lone CR, the Unicode line and paragraph separators.
const LINE_END = /\r\n?|[\u2028\u2029]/g;
// In a one-line field every line end and tab is a space.
const LINE_SPACE = /\r\n?|[\t\n\u2028\u2029]/g;

/** Text that may span lines (a narrative, a prompt, tool output): newlines and tabs kept, CR folded to a newline. */
export function inertText(text: string): string {
  return text.replace(LINE_END, '\n').replace(STRIP, '');
}

/** A one-line value (a key, a type, a title, a path, a handle): line ends and tabs become spaces, controls go. */
export function inertLine(text: string): string {
  return text.replace(LINE_SPACE, ' ').replace(STRIP, '');
}
