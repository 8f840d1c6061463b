// Memory-tag stripping and prompt gates (private spans, injected context, protocol chatter); pure, shared with the hooks client.

export const MEMORY_TAGS = [
  'private',
  'cairn-context',
  'system-reminder',
  'system_instruction',
  'system-instruction',
  'persisted-output',
] as const;

const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;

const isSpace = (ch: number) => ch === 0x20 || (ch >= 0x09 && ch <= 0x0d);

/** True when `text` holds `name` at `at`, ASCII letters compared without case. */
function nameAt(text: string, at: number, name: string): boolean {
  if (at + name.length > text.length) return false;
  for (let k = 0; k < name.length; k++) {
    let ch = text.charCodeAt(at + k);
    if (ch >= 0x41 && ch <= 0x5a) ch += 0x20;
    if (ch !== name.charCodeAt(k)) return false;
  }
  return true;
}

// First letters of the tag names (lower case): most '<' in code (`a < b`, `<div>`) are ruled out by one look.
const FIRST_LETTERS = new Set(MEMORY_TAGS.map((n) => n.charCodeAt(0)));

/** The memory tag an opening `<name` at `at` starts (name followed by whitespace, '/' or '>'), if any. */
function openingAt(text: string, at: number): string | null {
  const first = text.charCodeAt(at + 1) | 0x20;
  if (!FIRST_LETTERS.has(first)) return null;
  for (let n = 0; n < MEMORY_TAGS.length; n++) {
    const name = MEMORY_TAGS[n]!;
    if (!nameAt(text, at + 1, name)) continue;
    const next = text.charCodeAt(at + 1 + name.length);
    // The name must end there, so that `<private-notes>` is not taken for `<private>`.
    if (isSpace(next) || next === SLASH || next === GT) return name;
  }
  return null;
}

/** End (exclusive) of a closing `</name\s*>` at `at`, or -1. */
function closingEnd(text: string, at: number, name: string): number {
  if (text.charCodeAt(at + 1) !== SLASH || !nameAt(text, at + 2, name)) return -1;
  let i = at + 2 + name.length;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return text.charCodeAt(i) === GT ? i + 1 : -1;
}

/**
 * Finds closing tags in one forward sweep per name: each name's cursor only moves ahead, so looking up
 * "the first close of X after p" for increasing p costs the text's length in total.
 */
class Closers {
  readonly #at = new Map<string, { start: number; end: number }>();

  constructor(private readonly text: string) {}

  /** The first `</name>` starting at or after `from`, or null when there is none. */
  after(name: string, from: number): { start: number; end: number } | null {
    const known = this.#at.get(name);
    if (known && known.start >= from) return known.start === Infinity ? null : known;
    let i = Math.max(from, known ? known.start + 1 : from);
    for (;;) {
      i = this.text.indexOf('</', i);
      if (i < 0) {
        this.#at.set(name, { start: Infinity, end: Infinity });
        return null;
      }
      const end = closingEnd(this.text, i, name);
      if (end > 0) {
        const hit = { start: i, end };
        this.#at.set(name, hit);
        return hit;
      }
      i += 2;
    }
  }
}

export interface StripOptions {
  /**
   * An opening tag never closed hides everything after it (default): a forgotten `</private>` must not
   * publish what follows, and a text cut inside a block must not show the block's start.
   */
  unclosedToEnd?: boolean;
  /** A closing tag before any opening one hides everything before it (the text starts inside a block). */
  closedFromStart?: boolean;
}

/**
 * Removes memory-tag blocks, each from its opening tag (attributes allowed, any letter case) to the first
 * closing tag of the same name, across lines. One pass over the text: linear in its length however the
 * tags are arranged (a regex with a lazy body rescanned the rest of the text from every unclosed tag).
 */
export function stripTagBlocks(text: string, opts: StripOptions = {}): string {
  if (!text || text.indexOf('<') < 0) return text;
  const closers = new Closers(text);
  let out = '';
  let kept = 0;
  let i = 0;
  let gt = -1;
  if (opts.closedFromStart) {
    let cut = 0;
    for (const name of MEMORY_TAGS) {
      const close = closers.after(name, 0);
      if (close && close.end > cut && !openingBefore(text, name, close.start)) cut = close.end;
    }
    kept = i = cut;
  }
  for (;;) {
    i = text.indexOf('<', i);
    if (i < 0) break;
    const name = openingAt(text, i);
    if (!name) {
      i++;
      continue;
    }
    // The first '>' after the name ends the opening tag; remembered, since later tags often share it.
    if (gt < i + 1 + name.length) gt = text.indexOf('>', i + 1 + name.length);
    if (gt < 0) break; // no '>' anywhere after: no tag can open from here on
    const close = closers.after(name, gt + 1);
    if (!close) {
      if (opts.unclosedToEnd !== false) return out + text.slice(kept, i);
      // Another tag may open inside this one's attributes: look on from the next character.
      i++;
      continue;
    }
    out += text.slice(kept, i);
    kept = i = close.end;
  }
  return out + text.slice(kept);
}

/** True when an opening `<name` occurs before `limit` (a close there then ends a block, not a cut one). */
function openingBefore(text: string, name: string, limit: number): boolean {
  for (let i = text.indexOf('<'); i >= 0 && i < limit; i = text.indexOf('<', i + 1)) {
    if (openingAt(text, i) === name) return true;
  }
  return false;
}

/** Removes every memory-tag block (attributes allowed, shortest match, across lines), then trims. */
export function stripMemoryTags(text: string): string {
  if (!text) return '';
  return stripTagBlocks(text).trim();
}

/** Same, without trimming: for values inside tool payloads, where surrounding whitespace is content. */
export function stripMemoryTagsInline(text: string): string {
  return text ? stripTagBlocks(text) : '';
}

/** True when the text had content and nothing is left once the memory tags are removed. */
export function isFullyPrivate(text: string): boolean {
  return text.trim() !== '' && stripMemoryTags(text) === '';
}

const TASK_NOTIFICATION_MAX_CHARS = 256 * 1024;
// Exactly one block: the body may not open or close another task-notification.
const TASK_NOTIFICATION_ONLY =
  /^\s*<task-notification(?:\s[^>]*)?>(?:(?!<\/?task-notification\b)[\s\S])*<\/task-notification\s*>\s*$/i;

/** True when the prompt is exactly one `<task-notification>` block: agent-framework chatter, not a user request. */
export function isTaskNotificationOnly(text: string): boolean {
  if (!text || text.length > TASK_NOTIFICATION_MAX_CHARS) return false;
  if (new TextEncoder().encode(text).length > TASK_NOTIFICATION_MAX_CHARS) return false;
  return TASK_NOTIFICATION_ONLY.test(text);
}
