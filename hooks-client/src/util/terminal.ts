// Text the client prints to a terminal is inert there. What the server hands back (project keys, titles, types,
// handles, error messages) and what a repository holds (prime's notes) are other people's words: an escape
// sequence in them could write the user's clipboard (OSC 52), erase or rewrite lines (a held row hidden from
// `cairn admin held`), retitle the window, or a right-to-left override reorder what the user reads. So every
// command's output goes through termSafe (run.ts), and JSON output escapes the same characters instead (jsonText).
import type { Io } from '../io';

/**
 * C0 controls but tab and newline (ESC, BEL, backspace, CR, …), DEL, C1 controls (CSI U+009B, OSC U+009D, …), and
 * the bidirectional controls (embeddings, overrides, isolates, marks).
 */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** `text` without the characters that act on a terminal (see UNSAFE). Linear. */
export const termSafe = (text: string): string => text.replace(UNSAFE, '');

/** One line of a table or a status line: termSafe, and tabs and newlines as spaces. */
export const termLine = (text: string): string => termSafe(text).replace(/[\t\n]/g, ' ');

/** JSON for a terminal: the same characters written as \u escapes, so the value reads back unchanged. */
export function jsonText(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(
    /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * The Io a command prints through: every chunk termSafe. A `\r` that starts a chunk stays: it is the client's own
 * progress line (transfer, import, export) redrawing itself.
 */
export function terminalIo(io: Io): Io {
  const safe = (text: string) => (text.startsWith('\r') ? `\r${termSafe(text.slice(1))}` : termSafe(text));
  return Object.assign(Object.create(io) as Io, {
    out: (text: string) => io.out(safe(text)),
    err: (text: string) => io.err(safe(text)),
  });
}
