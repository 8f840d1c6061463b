// Small pure formatters shared by the recall renderers: dates in a time zone, token estimates, titles.
import { neutralizePrefix } from '#shared/fence';

const formatters = new Map<string, Intl.DateTimeFormat>();

function parts(ms: number, timeZone: string): Record<string, string> {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(timeZone, f);
  }
  const out: Record<string, string> = {};
  for (const p of f.formatToParts(new Date(ms))) out[p.type] = p.value;
  return out;
}

/** True when Intl knows the zone (e.g. `Europe/Berlin`, `UTC`). */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** `2026-08-19` in the given zone. */
export function dayOf(ms: number, timeZone: string): string {
  const p = parts(ms, timeZone);
  return `${p.year}-${p.month}-${p.day}`;
}

/** `14:05`, `9:05` (24-hour, no leading zero) in the given zone. */
export function clockOf(ms: number, timeZone: string): string {
  const p = parts(ms, timeZone);
  return `${Number(p.hour)}:${p.minute}`;
}

export const dayAndClock = (ms: number, timeZone: string) => `${dayOf(ms, timeZone)} ${clockOf(ms, timeZone)}`;

/** The rough token count we quote everywhere: characters / 4, rounded up. */
export const estimateTokens = (chars: number) => Math.ceil(chars / 4);

/** Tokens it takes to read an observation's full record (title, subtitle, narrative, facts as stored). */
export function readTokens(o: {
  title: string | null;
  subtitle: string | null;
  narrative: string | null;
  facts: string;
}): number {
  return estimateTokens(
    (o.title ?? '').length + (o.subtitle ?? '').length + (o.narrative ?? '').length + o.facts.length,
  );
}

/** One line of text: whitespace collapsed, cut to `max` characters with an ellipsis. */
export function oneLine(text: string | null | undefined, max: number, fallback = ''): string {
  const t = (text ?? '').replace(/\s+/g, ' ').trim();
  if (!t) return fallback;
  const chars = [...t];
  if (chars.length <= max) return t;
  const cut = chars.slice(0, max - 1).join('');
  // Prefer ending on a word boundary when one is near, so the cut reads as an abbreviation, not a typo.
  const space = cut.lastIndexOf(' ');
  return `${(space > cut.length - 16 && space > 0 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** 12345 → "12,345" without depending on the runtime's locale data. */
export const thousands = (n: number) => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/**
 * Stored text as one line inside a memory frame: fenced first (src/shared/fence.ts: no tag, frame marker,
 * invisible or bidi character survives), then collapsed and cut like `oneLine`. Every renderer that puts stored
 * text into injected context uses this, never `oneLine` on the raw field.
 */
export const safeLine = (text: string | null | undefined, max: number, fallback = ''): string =>
  oneLine(neutralizePrefix(text, max), max, fallback);
