// Everything that happens to text before it leaves the machine: size cut, tags stripped, secrets redacted.
// Cut first: every later step runs over at most the budget plus a margin, however large the input.
import { stripTagBlocks } from '#shared/tags';
import { FIELD_MAX_CHARS, joinElided, truncateField } from '#shared/truncate';
import { redact, redactValue } from '#shared/redact';

// Text kept around each cut point while redacting, so a secret that straddles the cut is still seen whole
// (a 4096-bit PEM key is ~3.3 KB).
const MARGIN = 8_000;
/** Objects nested deeper than this are sent as a note: no agent payload is, and walking them would recurse. */
const MAX_DEPTH = 32;

const isHigh = (s: string, i: number) =>
  i >= 0 && i < s.length && s.charCodeAt(i) >= 0xd800 && s.charCodeAt(i) <= 0xdbff;
const isLow = (s: string, i: number) =>
  i >= 0 && i < s.length && s.charCodeAt(i) >= 0xdc00 && s.charCodeAt(i) <= 0xdfff;

type Clean = (segment: string, where: 'whole' | 'head' | 'tail') => string;

/** Tags stripped, then secrets redacted; a segment cut from a longer text hides a tag block the cut split. */
const stripAndRedact =
  (trim: boolean): Clean =>
  (segment, where) => {
    const s = segment.includes('<') ? stripTagBlocks(segment, { closedFromStart: where === 'tail' }) : segment;
    return redact(trim ? (where === 'head' ? s.trimStart() : where === 'tail' ? s.trimEnd() : s.trim()) : s);
  };

/**
 * Cuts to the server's head 60% / marker / tail 30% and cleans only what survives the cut (plus a margin,
 * so a secret across a cut point is still seen whole).
 */
export function redactAndCut(text: string, budget = FIELD_MAX_CHARS, clean: Clean = (s) => redact(s)): string {
  if (text.length <= budget + 2 * MARGIN) return truncateField(clean(text, 'whole'), budget);
  const head = Math.floor(budget * 0.6);
  const tail = Math.floor(budget * 0.3);
  const headText = clean(text.slice(0, head + MARGIN), 'head');
  const tailText = clean(text.slice(text.length - tail - MARGIN), 'tail');
  // Never leave half a surrogate pair at either cut.
  const headEnd = isHigh(headText, head - 1) ? head - 1 : Math.min(head, headText.length);
  const from = Math.max(0, tailText.length - tail);
  const tailStart = isLow(tailText, from) ? from + 1 : from;
  return joinElided(headText.slice(0, headEnd), tailText.slice(tailStart), text.length - head - tail, text.length);
}

/** A prompt or assistant message: cut, tags removed (and trimmed), secrets redacted. */
export function scrubText(text: string): string {
  return redactAndCut(text, FIELD_MAX_CHARS, stripAndRedact(true));
}

/** A tool input or response (object, string or array): the same, value by value, then bounded as a whole. */
export function scrubPayload(value: unknown): unknown {
  const shallow = limitDepth(value, MAX_DEPTH);
  const clean = stripAndRedact(false);
  // Strings are cleaned in order while the work budget lasts; past it (a payload of many large values,
  // far beyond what the server keeps of one field) the rest are sent as a size note, never unredacted.
  let budget = WORK_CAP;
  return boundValue(
    redactValue(shallow, (s) => {
      if (budget <= 0 && s.length > 16) return `[omitted: ${s.length} chars]`;
      budget -= Math.min(s.length, PER_STRING);
      return redactAndCut(s, FIELD_MAX_CHARS, clean);
    }),
  );
}

/** Characters one string costs at most (its cut size), and what one payload may spend in all. */
const PER_STRING = FIELD_MAX_CHARS + 2 * MARGIN;
const WORK_CAP = 4 * PER_STRING;

/** A copy with everything below `max` levels replaced by a note (recursion bounded by `max`). */
export function limitDepth(value: unknown, max: number, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth >= max) return '[nested too deep]';
  if (Array.isArray(value)) return value.map((v) => limitDepth(v, max, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = limitDepth(v, max, depth + 1);
  return out;
}

/**
 * If a value is still far over budget as a whole (many fields, long arrays), sends its serialised form cut
 * as one string: the server cuts each field to the same budget anyway, so more would only cost bandwidth.
 */
export function boundValue(value: unknown, budget = FIELD_MAX_CHARS): unknown {
  if (typeof value === 'string') return value;
  const serialised = JSON.stringify(value) ?? '';
  return serialised.length > budget * 3 ? truncateField(serialised, budget) : value;
}
