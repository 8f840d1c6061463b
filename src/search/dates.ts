// Calendar days named in a query ("on 21.01.2024", "29 Dec 2023", "2024-01-05", "January 5, 2024"): time
// questions ask about what happened on a day, and a day written in digits matches no stored words. Search
// lifts rows stored around the day (src/search/search.ts) instead of matching the digits. Pure; one regex
// pass per format over at most 1000 characters.
import { reciprocalRankFusion } from './rrf';

export interface NamedDays {
  /** The query with digit-only dates cut out (what is left to match as words). */
  rest: string;
  /** Start of each named day, UTC epoch ms, in order of appearance, without repeats. */
  days: number[];
}

const DAY_MS = 86_400_000;
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH =
  '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\\.?';
const monthOf = (name: string) => MONTHS.indexOf(name.slice(0, 3).toLowerCase()) + 1;

/** Each format: a regex (global, case-insensitive) and how its groups map to year, month, day. */
const FORMATS: { re: RegExp; ymd: (m: RegExpExecArray) => [number, number, number][]; words?: true }[] = [
  // 2024-01-05 (ISO, also with a time after it: the day is what counts)
  { re: /\b(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ][\d:.]+Z?)?\b/gi, ymd: (m) => [[+m[1]!, +m[2]!, +m[3]!]] },
  // 21.01.2024: day first, as written wherever dots separate dates
  { re: /\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b/g, ymd: (m) => [[+m[3]!, +m[2]!, +m[1]!]] },
  // 1/5/2024: day or month first; a part above 12 decides, otherwise both readings count
  {
    re: /\b(\d{1,2})\/(\d{1,2})\/(\d{4})\b/g,
    ymd: (m) => {
      const [a, b, y] = [+m[1]!, +m[2]!, +m[3]!];
      if (a > 12) return [[y, b, a]];
      if (b > 12 || a === b) return [[y, a, b]];
      return [
        [y, a, b],
        [y, b, a],
      ];
    },
  },
  // 5 January 2024, 29 Dec 2023, 5th of Jan 2024
  {
    re: new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?(?: of)? ${MONTH},? (\\d{4})\\b`, 'gi'),
    ymd: (m) => [[+m[3]!, monthOf(m[2]!), +m[1]!]],
    words: true,
  },
  // January 5, 2024; Jan 5th 2024
  {
    re: new RegExp(`\\b${MONTH} (\\d{1,2})(?:st|nd|rd|th)?,? (\\d{4})\\b`, 'gi'),
    ymd: (m) => [[+m[3]!, monthOf(m[1]!), +m[2]!]],
    words: true,
  },
];

/** UTC start of a real calendar day, or null (31.02.2024, month 13, years outside 1970–2999). */
function dayStart(y: number, mo: number, d: number): number | null {
  if (y < 1970 || y > 2999 || mo < 1 || mo > 12 || d < 1 || d > 31) return null;
  const t = Date.UTC(y, mo - 1, d);
  return new Date(t).getUTCDate() === d ? t : null;
}

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const RELATIVE =
  /\b(today|yesterday|(\d{1,2}) days? ago|last week|(?:last|on) (sunday|monday|tuesday|wednesday|thursday|friday|saturday))\b/gi;

/**
 * Days named relative to `now` ("yesterday", "3 days ago", "last week", "on Friday" = the latest Friday before
 * today), which is what people ask a memory of their own work. The words leave the query: stored text rarely
 * says "yesterday" about the day it was written.
 */
function relativeDays(text: string, now: number, days: number[], max: number): string {
  const today = now - (now % DAY_MS);
  return text.replace(RELATIVE, (all: string, what: string, ago?: string, weekday?: string) => {
    const w = what.toLowerCase();
    let found: number[];
    if (w === 'today') found = [today];
    else if (w === 'yesterday') found = [today - DAY_MS];
    else if (ago !== undefined) found = [today - Number(ago) * DAY_MS];
    else if (w === 'last week') found = [today - 7 * DAY_MS, today - DAY_MS];
    else {
      const back = ((new Date(today).getUTCDay() - WEEKDAYS.indexOf(weekday!.toLowerCase()) + 6) % 7) + 1;
      found = [today - back * DAY_MS];
    }
    for (const t of found) if (!days.includes(t) && days.length < max) days.push(t);
    return ' ';
  });
}

/**
 * The calendar days a query names, and the query without them. At most `max` days. Relative days count only
 * when no date is written out ("on Friday before 10.01.2024" is about January 2024, not about `now`).
 */
export function namedDays(text: string, now?: number, max = 4): NamedDays {
  let rest = text.slice(0, 1000);
  const days: number[] = [];
  for (const f of FORMATS) {
    rest = rest.replace(f.re, (...args) => {
      const m = args.slice(0, -2) as unknown as RegExpExecArray;
      const found = f
        .ymd(m)
        .map(([y, mo, d]) => dayStart(y, mo, d))
        .filter((t): t is number => t !== null);
      if (found.length === 0) return m[0];
      for (const t of found) if (!days.includes(t) && days.length < max) days.push(t);
      // Digits-only dates match no stored words, so they leave the query; a written month may be in the text.
      return f.words ? m[0] : ' ';
    });
  }
  if (days.length === 0 && now !== undefined) rest = relativeDays(rest, now, days, max);
  return { rest: days.length ? rest : text, days };
}
/**
 * Rows count as "around" a named day from a day before to a day after it: a day named in the user's time zone
 * spans parts of three UTC days. Measured on REALTALK (BENCHMARKS.md): the exact UTC day alone lost more
 * questions than it won; ±1 day gained.
 */
export const DAY_PAD = 1;
/** Days spread wider than this are not one time question; no window is used. */
const MAX_SPAN_DAYS = 31;

/** The stored-at window (inclusive ms) around the named days, or null when there are none or they spread too wide. */
export function dayWindow(days: readonly number[]): { since: number; until: number } | null {
  if (days.length === 0) return null;
  const first = Math.min(...days);
  const last = Math.max(...days);
  if (last - first > MAX_SPAN_DAYS * DAY_MS) return null;
  return { since: first - DAY_PAD * DAY_MS, until: last + (1 + DAY_PAD) * DAY_MS - 1 };
}

/**
 * Fuses a ranked list with the matches stored around the named days by RRF: a row both lists rank well rises,
 * and rows only the window found join the list. Items keep what the list knew about them; the rest are made
 * by `fresh`.
 */
export function liftDated<T extends { id: number }>(
  list: readonly T[],
  dated: readonly number[],
  fresh: (id: number) => T,
): T[] {
  if (dated.length === 0) return [...list];
  const byId = new Map(list.map((x) => [x.id, x]));
  return reciprocalRankFusion([list.map((x) => x.id), dated]).map((f) => byId.get(f.id) ?? fresh(f.id));
}
