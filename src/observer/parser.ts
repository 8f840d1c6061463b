// Tolerant parser for the observer's XML replies: observations, a summary, or a skipped summary.
import type { Mode } from './modes';
import type { ParsedSummary, ParseResult, ProposedCorrection } from './types';
import { FALLBACK_OBSERVATION_TYPE, type ObservationContent } from '#shared/wire/records';

export interface ParseOptions {
  /**
   * Also read a `<summary>` that follows observations. Off by default: a reply whose first root is an
   * observation carries no summary. The turn enables it only when it asked for both in one request.
   */
  allowBoth?: boolean;
}

// Only a payload that is entirely one fenced block is unwrapped; fences inside text are content.
const WHOLE_FENCE = /^\s*```[\w-]*[ \t]*\r?\n([\s\S]*?)\r?\n[ \t]*```\s*$/;
const SKIP_SUMMARY = /<skip_summary\b([^>]*?)\/?>/i;
const FIRST_ROOT = /<(observation|summary)\b/i;

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
const decode = (s: string) =>
  s
    .replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, '$1')
    .replace(/&(lt|gt|amp|quot|apos);/g, (_m, name: string) => ENTITIES[name]!);

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Inner text of every `<name …>…</name>` (case-insensitive, attributes allowed). */
function blocks(text: string, name: string): string[] {
  const re = new RegExp(`<${escapeRe(name)}(?:\\s[^>]*)?>([\\s\\S]*?)</${escapeRe(name)}\\s*>`, 'gi');
  return [...text.matchAll(re)].map((m) => m[1]!);
}

function field(text: string, name: string): string | null {
  const inner = blocks(text, name)[0];
  if (inner === undefined) return null;
  const value = decode(inner).trim();
  return value === '' ? null : value;
}

function list(text: string, container: string, item: string): string[] {
  const inner = blocks(text, container)[0];
  if (inner === undefined) return [];
  return blocks(inner, item)
    .map((v) => decode(v).trim())
    .filter((v) => v !== '');
}

const dedupe = (items: string[]) => [...new Set(items)];

function parseObservation(body: string, mode: Mode): ObservationContent | null {
  const known = mode.observationTypes.map((t) => t.id);
  const emitted = field(body, 'type');
  // Types are a closed set: one the mode does not know (a model's invention, or text a tool output planted in the
  // reply) becomes the fixed fallback, never stored as written. A missing one is the mode's first type.
  const fallback = known.includes(FALLBACK_OBSERVATION_TYPE) ? FALLBACK_OBSERVATION_TYPE : known[0]!;
  const type = emitted === null ? known[0]! : (known.find((k) => k === emitted.trim().toLowerCase()) ?? fallback);
  const concepts = dedupe(
    list(body, 'concepts', 'concept')
      .map((c) => c.split(':')[0]!.trim())
      .filter((c) => c !== '' && c.toLowerCase() !== type.toLowerCase()),
  );
  const obs: ObservationContent = {
    type,
    title: field(body, 'title'),
    subtitle: field(body, 'subtitle'),
    facts: list(body, 'facts', 'fact'),
    narrative: field(body, 'narrative'),
    concepts,
    filesRead: dedupe(list(body, 'files_read', 'file')),
    filesModified: dedupe(list(body, 'files_modified', 'file')),
  };
  // A ghost (no title, narrative, facts or concepts) says nothing; a subtitle or file list alone is not enough.
  if (obs.title === null && obs.narrative === null && obs.facts.length === 0 && obs.concepts.length === 0) return null;
  return obs;
}

function parseSummary(text: string): ParsedSummary | null {
  const body = blocks(text, 'summary')[0];
  if (body === undefined) return null;
  const summary: ParsedSummary = {
    request: field(body, 'request'),
    investigated: field(body, 'investigated'),
    learned: field(body, 'learned'),
    completed: field(body, 'completed'),
    nextSteps: field(body, 'next_steps'),
    notes: field(body, 'notes'),
    skipped: false,
    skipReason: null,
  };
  // Notes alone do not make a summary.
  const substantive = [summary.request, summary.investigated, summary.learned, summary.completed, summary.nextSteps];
  return substantive.some((v) => v !== null) ? summary : null;
}

function skippedSummary(attrs: string): ParsedSummary {
  const reason = /\breason\s*=\s*(?:"([^"]*)"|'([^']*)')/i.exec(attrs);
  const text = reason ? decode(reason[1] ?? reason[2] ?? '').trim() : '';
  return {
    request: null,
    investigated: null,
    learned: null,
    completed: null,
    nextSteps: null,
    notes: null,
    skipped: true,
    skipReason: text === '' ? null : text,
  };
}

export function parseObserverOutput(raw: unknown, mode: Mode, options: ParseOptions = {}): ParseResult {
  if (typeof raw !== 'string' || raw.trim() === '') return { valid: false };
  const fenced = WHOLE_FENCE.exec(raw);
  const text = fenced ? fenced[1]! : raw;

  const observationsOf = () =>
    blocks(text, 'observation')
      .map((b) => parseObservation(b, mode))
      .filter((o): o is ObservationContent => o !== null);

  const skip = SKIP_SUMMARY.exec(text);
  if (skip) {
    return {
      valid: true,
      observations: options.allowBoth ? observationsOf() : [],
      summary: skippedSummary(skip[1] ?? ''),
    };
  }

  const root = FIRST_ROOT.exec(text)?.[1]?.toLowerCase();
  if (root === undefined) return { valid: false };

  if (root === 'observation') {
    const observations = observationsOf();
    const summary = options.allowBoth
      ? parseSummary(text.replace(/<observation\b[\s\S]*?<\/observation\s*>/gi, ''))
      : null;
    if (observations.length === 0 && summary === null) return { valid: false };
    return { valid: true, observations, summary };
  }

  const summary = parseSummary(text);
  if (summary === null) return { valid: false };
  return { valid: true, observations: options.allowBoth ? observationsOf() : [], summary };
}

/** At most this many corrections are read from one observation, and from one reply. */
const CORRECTIONS_PER_OBSERVATION = 3;
const CORRECTIONS_PER_REPLY = 5;
const REASON_CHARS = 500;
const SUPERSEDES =
  /<supersedes\b([^>]{0,200}?)(?<!\/)>([\s\S]{0,2000}?)<\/supersedes\s*>|<supersedes\b([^>]{0,200}?)\/>/gi;
const ID_ATTR = /\bid\s*=\s*["']?\s*#?(\d{1,15})\b/i;
const LEADING_ID = /^\s*#?(\d{1,15})\b[\s:.\-\u2014]*/;

/**
 * The corrections a reply proposes: `<supersedes id="N">why</supersedes>` inside an observation says the record #N
 * is superseded by that observation. `observation` is the index among the observations `parseObserverOutput`
 * returns for the same reply (ghosts skipped the same way). Tolerant: a tag without a usable id is ignored; a
 * missing reason gets a stock one. Bounded per observation and per reply.
 */
export function parseCorrections(raw: unknown, mode: Mode): ProposedCorrection[] {
  if (typeof raw !== 'string' || raw.trim() === '') return [];
  const fenced = WHOLE_FENCE.exec(raw);
  const text = fenced ? fenced[1]! : raw;
  const out: ProposedCorrection[] = [];
  let index = 0;
  for (const body of blocks(text, 'observation')) {
    if (parseObservation(body, mode) === null) continue;
    let here = 0;
    for (const m of body.matchAll(SUPERSEDES)) {
      if (here >= CORRECTIONS_PER_OBSERVATION || out.length >= CORRECTIONS_PER_REPLY) break;
      const attrs = m[1] ?? m[3] ?? '';
      let inner = decode(m[2] ?? '').trim();
      let id = ID_ATTR.exec(attrs)?.[1];
      if (id === undefined) {
        const lead = LEADING_ID.exec(inner);
        if (lead) {
          id = lead[1];
          inner = inner.slice(lead[0].length).trim();
        }
      }
      const n = id === undefined ? NaN : Number(id);
      if (!Number.isSafeInteger(n) || n <= 0) continue;
      if (out.some((c) => c.id === n)) continue;
      const reason = inner.replace(/\s+/g, ' ').slice(0, REASON_CHARS) || 'superseded by a newer observation';
      out.push({ observation: index, id: n, reason });
      here++;
    }
    index++;
  }
  return out;
}

/** At most this many observations of one reply go to the user's personal memory. */
const PERSONAL_PER_REPLY = 3;
const PERSONAL_SCOPE = /<scope\b[^>]{0,100}>\s*personal\s*<\/scope\s*>/i;

/**
 * Which observations of a reply the observer marked as the user's own preference or rule (`<scope>personal</scope>`
 * inside the block): indices among the observations `parseObserverOutput` returns for the same reply (ghosts skipped
 * the same way), at most PERSONAL_PER_REPLY. They are stored in the author's personal memory, never the project's.
 */
export function parsePersonal(raw: unknown, mode: Mode): number[] {
  if (typeof raw !== 'string' || raw.trim() === '') return [];
  const fenced = WHOLE_FENCE.exec(raw);
  const text = fenced ? fenced[1]! : raw;
  const out: number[] = [];
  let index = 0;
  for (const body of blocks(text, 'observation')) {
    if (parseObservation(body, mode) === null) continue;
    if (PERSONAL_SCOPE.test(body) && out.length < PERSONAL_PER_REPLY) out.push(index);
    index++;
  }
  return out;
}
