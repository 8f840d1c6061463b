// Shape of JSON text, measured before JSON.parse (pure, shared): one pass, no recursion, so a body
// nested 50,000 arrays deep or holding a million tiny values is refused with 400 instead of overflowing
// the stack in a later recursive walk (truncation, redaction, zod) or stalling the isolate.

/** Far deeper than the tool payloads coding agents send. */
export const JSON_MAX_DEPTH = 64;
/** Values (scalars, objects, arrays) in one body: a 1 MB body of real events holds a few thousand. */
export const JSON_MAX_VALUES = 100_000;

export interface JsonShape {
  depth: number;
  values: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/**
 * Deepest nesting and (roughly) how many values the text holds, counting outside strings only. Stops early
 * once either passes its limit, so the cost is bounded by the text length whatever it holds.
 */
export function measureJson(text: string, maxDepth = JSON_MAX_DEPTH, maxValues = JSON_MAX_VALUES): JsonShape {
  let depth = 0;
  let deepest = 0;
  let values = text.trim() ? 1 : 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === BACKSLASH) i++;
      else if (ch === QUOTE) inString = false;
      continue;
    }
    if (ch === QUOTE) inString = true;
    else if (ch === OPEN_OBJECT || ch === OPEN_ARRAY) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > maxDepth) break;
    } else if (ch === CLOSE_OBJECT || ch === CLOSE_ARRAY) depth--;
    // Each comma separates one more value (or key/value pair) from the last.
    else if (ch === COMMA && ++values > maxValues) break;
  }
  return { depth: deepest, values };
}
