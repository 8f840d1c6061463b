// Everything that happens to text before it leaves the machine: tags stripped, secrets redacted, size cut.
import { redact, redactValue } from './redact';
import { stripMemoryTags, stripMemoryTagsInline } from './tags';
import { FIELD_BUDGET, truncateMiddle, truncateValue } from './truncate';

// Text kept around each cut point while redacting, so a secret that straddles the cut is still seen whole
// (a 4096-bit PEM key is ~3.3 KB).
const MARGIN = 8_000;

/**
 * Redacts then truncates, without running the rules over a megabyte: only the regions that survive the cut
 * (plus a margin) are redacted.
 */
export function redactAndCut(text: string, budget = FIELD_BUDGET): string {
  if (text.length <= budget + 2 * MARGIN) return truncateMiddle(redact(text), budget);
  const head = Math.floor(budget * 0.6);
  const tail = Math.floor(budget * 0.3);
  const keptHead = redact(text.slice(0, head + MARGIN)).slice(0, head);
  const keptTail = redact(text.slice(text.length - tail - MARGIN)).slice(-tail);
  return `${keptHead}<elided ${text.length - head - tail} chars/>${keptTail}`;
}

/** A prompt or assistant message: tags removed (and trimmed), secrets redacted, cut to budget. */
export function scrubText(text: string): string {
  return redactAndCut(stripMemoryTags(text));
}

/** A tool input or response (object, string or array): the same, value by value, then bounded as a whole. */
export function scrubPayload(value: unknown): unknown {
  const redacted = redactValue(value, (s) => redactAndCut(stripMemoryTagsInline(s)));
  return truncateValue(redacted);
}
