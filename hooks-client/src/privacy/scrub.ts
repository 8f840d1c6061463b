// Everything that happens to text before it leaves the machine: tags stripped, secrets redacted, size cut.
import { stripMemoryTags, stripMemoryTagsInline } from '#shared/tags';
import { FIELD_MAX_CHARS, joinElided, truncateField } from '#shared/truncate';
import { redact, redactValue } from './redact';

// Text kept around each cut point while redacting, so a secret that straddles the cut is still seen whole
// (a 4096-bit PEM key is ~3.3 KB).
const MARGIN = 8_000;

const isHigh = (s: string, i: number) => i >= 0 && i < s.length && s.charCodeAt(i) >= 0xd800 && s.charCodeAt(i) <= 0xdbff;
const isLow = (s: string, i: number) => i >= 0 && i < s.length && s.charCodeAt(i) >= 0xdc00 && s.charCodeAt(i) <= 0xdfff;

/**
 * Redacts then truncates (the server's head 60% / marker / tail 30%), without running the rules over a
 * megabyte: only the regions that survive the cut (plus a margin) are redacted.
 */
export function redactAndCut(text: string, budget = FIELD_MAX_CHARS): string {
  if (text.length <= budget + 2 * MARGIN) return truncateField(redact(text), budget);
  const head = Math.floor(budget * 0.6);
  const tail = Math.floor(budget * 0.3);
  const headText = redact(text.slice(0, head + MARGIN));
  const tailText = redact(text.slice(text.length - tail - MARGIN));
  // Never leave half a surrogate pair at either cut.
  const headEnd = isHigh(headText, head - 1) ? head - 1 : head;
  const tailStart = isLow(tailText, tailText.length - tail) ? tailText.length - tail + 1 : tailText.length - tail;
  return joinElided(headText.slice(0, headEnd), tailText.slice(tailStart), text.length - head - tail, text.length);
}

/** A prompt or assistant message: tags removed (and trimmed), secrets redacted, cut to budget. */
export function scrubText(text: string): string {
  return redactAndCut(stripMemoryTags(text));
}

/** A tool input or response (object, string or array): the same, value by value, then bounded as a whole. */
export function scrubPayload(value: unknown): unknown {
  // A memory tag starts with '<': most values (command output, file text) skip the tag regex altogether.
  const redacted = redactValue(value, (s) => redactAndCut(s.includes('<') ? stripMemoryTagsInline(s) : s));
  return boundValue(redacted);
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
