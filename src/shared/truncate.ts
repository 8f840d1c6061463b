// Cuts oversized fields to a head + elision marker + tail before they reach a prompt; pure (shared with the hooks client).
import { JSON_MAX_DEPTH, measureJson } from './json-shape';
import { stripMemoryTags, stripTagBlocks } from './tags';

export const FIELD_MAX_CHARS = 16_000;
const HEAD_SHARE = 0.6;
const TAIL_SHARE = 0.3;

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/**
 * Keeps the first 60% and the last 30% of the budget with an `<elided …/>` marker between them.
 * The remaining 10% is headroom for the marker, so the result always fits the budget.
 */
export function truncateField(text: string, max = FIELD_MAX_CHARS): string {
  if (text.length <= max) return text;
  const { headEnd, tailStart } = cutPoints(text, max);
  return joinElided(text.slice(0, headEnd), text.slice(tailStart), tailStart - headEnd, text.length);
}

function cutPoints(text: string, max: number): { headEnd: number; tailStart: number } {
  let headEnd = Math.floor(max * HEAD_SHARE);
  let tailStart = text.length - Math.floor(max * TAIL_SHARE);
  // Never split a surrogate pair: a lone half would become U+FFFD in JSON and prompts.
  if (headEnd > 0 && isHighSurrogate(text.charCodeAt(headEnd - 1))) headEnd -= 1;
  if (tailStart < text.length && isLowSurrogate(text.charCodeAt(tailStart))) tailStart += 1;
  return { headEnd, tailStart };
}

/**
 * A text field made safe to store: cut to the budget FIRST, then memory tags stripped from what is kept,
 * so the work is bounded by the budget however large the input. A block the cut splits is hidden on both
 * sides: an opening tag left unclosed hides the rest of its side, a closing tag in the tail whose opening
 * was cut away hides the tail up to it.
 */
export function cleanField(text: string, max = FIELD_MAX_CHARS): string {
  if (text.length <= max) return stripMemoryTags(text);
  const { headEnd, tailStart } = cutPoints(text, max);
  const head = stripTagBlocks(text.slice(0, headEnd)).trimStart();
  const tail = stripTagBlocks(text.slice(tailStart), { closedFromStart: true }).trimEnd();
  return joinElided(head, tail, tailStart - headEnd, text.length);
}

/** Head + marker + tail; also used by the hooks client, which redacts head and tail separately before joining. */
export function joinElided(head: string, tail: string, elided: number, originalSize: number): string {
  return `${head}\n… <elided chars="${elided}" original_size_chars="${originalSize}" reason="oversize"/> …\n${tail}`;
}

/**
 * Turns a hook payload field into prompt text: objects and lists as pretty JSON, a string holding a JSON
 * object or list re-serialised the same way (so both shapes read alike), other strings as they are.
 */
export function serializeField(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') {
    const trimmed = value.trim();
    // A string holding JSON nested past the body limit's depth stays a string (parsing and re-serialising
    // it would recurse that deep).
    if ((trimmed.startsWith('{') || trimmed.startsWith('[')) && measureJson(trimmed).depth <= JSON_MAX_DEPTH) {
      try {
        return JSON.stringify(JSON.parse(trimmed), null, 2);
      } catch {
        return value;
      }
    }
    return value;
  }
  try {
    return JSON.stringify(value, null, 2) ?? '';
  } catch {
    return String(value);
  }
}
