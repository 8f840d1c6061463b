// Classifies observer replies (xml / idle / prose) and spots quota and auth-failure prose among them.
import type { OutputClass } from './types';

const XML_ROOT = /<(?:observation|summary|skip_summary)\b/i;

const normalise = (text: string) => text.toLowerCase().replace(/\s+/g, ' ').trim();

/** Blank → idle (nothing worth recording); anything with an observation/summary/skip tag → xml; else prose. */
export function classifyOutput(raw: unknown): OutputClass {
  if (typeof raw !== 'string' || raw.trim() === '') return 'idle';
  return XML_ROOT.test(raw) ? 'xml' : 'prose';
}

// A named allowance (usage, weekly, subscription, spend, credit) near a word saying it ran out.
const ALLOWANCE = String.raw`(?:usage limit|(?:weekly|daily|monthly|subscription|plan|account) (?:usage |rate )?(?:limit|quota|allowance)|spend(?:ing)? (?:limit|cap)|credit balance|out of credits|quota)`;
const EXHAUSTED = String.raw`(?:reached|exceeded|exhausted|used up|hit|too low|ran out|run out|resets?|try again)`;
const QUOTA_PATTERNS = [
  new RegExp(String.raw`\b${ALLOWANCE}\b.{0,80}\b${EXHAUSTED}\b`),
  new RegExp(String.raw`\b${EXHAUSTED}\b.{0,80}\b${ALLOWANCE}\b`),
];

/** The observer answered in words that it has run out of allowance (the events must wait, not be dropped). */
export function isQuotaText(raw: unknown): boolean {
  if (typeof raw !== 'string' || classifyOutput(raw) !== 'prose') return false;
  const text = normalise(raw);
  return QUOTA_PATTERNS.some((p) => p.test(text));
}

const AUTH_PATTERNS = [
  /\bfail(?:ed|ure|s)? to auth(?:enticate|orize|orise)?\b/,
  /\bauth(?:entication|orization|orisation)? (?:failed|failure|error)\b/,
  /\b(?:401|403) (?:unauthori[sz]ed|forbidden)\b/,
  /\b(?:status(?: code)?|http|api error|request failed with)\s?[:=]?\s?(?:401|403)\b/,
  /\b(?:invalid|expired|revoked) (?:api key|x-api-key|credentials|oauth token|access token)\b/,
  /\b(?:api key|credentials|authentication|oauth token|access token) (?:is |are |has |have )?(?:been )?(?:required|invalid|expired|revoked)\b/,
  /\/login\b.{0,40}\b(?:to (?:authenticate|continue|sign in|log in)|again|and retry|reauthenticate)\b/,
];

/** The observer answered in words that its credentials are refused (XML-shaped replies never count). */
export function isAuthFailureText(raw: unknown): boolean {
  if (typeof raw !== 'string' || classifyOutput(raw) !== 'prose') return false;
  const text = normalise(raw);
  return AUTH_PATTERNS.some((p) => p.test(text));
}

/** One-line preview for logs: whitespace collapsed, cut at `max` with the count of what was left out. */
export function previewOutput(raw: unknown, max = 200): string {
  if (typeof raw !== 'string') return `(non-string output: ${raw === null ? 'null' : typeof raw})`;
  const flat = raw.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  return `${flat.slice(0, max)}…(+${flat.length - max} chars)`;
}
