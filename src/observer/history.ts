// What the observer conversation keeps when its history must shrink to fit the model's window (window.ts): the
// newest exchanges that fit, and a short account of what was cut. Pure; linear in the messages.
import type { ChatMessage } from './types';

/** What has been cut from a conversation so far (kept in its state, so later cuts add to it). */
export interface CutAccount {
  /** Tool calls whose blocks were cut. */
  calls: number;
  /** Summary requests that were cut. */
  summaries: number;
  /** Titles of the observations recorded for the cut calls, the newest last (at most NOTE_TITLES). */
  titles: string[];
}

export interface HistoryLimits {
  chars: number;
  tokens: number;
}

const NOTE_TITLES = 12;
const TITLE_CHARS = 120;
/** The note never grows past this (12 titles of 120 characters and the sentences around them). */
export const NOTE_MAX_CHARS = 2_000;

const CALL_BLOCK = '<observed_from_primary_session>';
const SUMMARY_REQUEST = '=== SUMMARY REQUEST ===';

/**
 * Splits a conversation (user and assistant turns alternating, the new user message last) into the part cut
 * and the part kept: the newest whole exchanges that fit `limits` beside the new message, which is always
 * kept. The kept part starts with a user message, as chat APIs require.
 */
export function fitMessages(
  messages: readonly ChatMessage[],
  limits: HistoryLimits,
  tokensOf: (text: string) => number,
): { kept: ChatMessage[]; cut: ChatMessage[] } {
  if (messages.length === 0) return { kept: [], cut: [] };
  let start = messages.length - 1;
  let chars = messages[start]!.content.length;
  let tokens = tokensOf(messages[start]!.content);
  let addChars = 0;
  let addTokens = 0;
  for (let i = start - 1; i >= 0; i--) {
    const m = messages[i]!;
    addChars += m.content.length;
    addTokens += tokensOf(m.content);
    // An exchange is taken whole, from its user message on.
    if (m.role !== 'user') continue;
    if (chars + addChars > limits.chars || tokens + addTokens > limits.tokens) break;
    chars += addChars;
    tokens += addTokens;
    addChars = 0;
    addTokens = 0;
    start = i;
  }
  return { kept: messages.slice(start), cut: messages.slice(0, start) };
}

function occurrences(text: string, needle: string): number {
  let n = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) n++;
  return n;
}

/** Adds the messages just cut to what was cut before. */
export function tallyCut(cut: readonly ChatMessage[], before: CutAccount | undefined): CutAccount {
  const account: CutAccount = {
    calls: before?.calls ?? 0,
    summaries: before?.summaries ?? 0,
    titles: [...(before?.titles ?? [])],
  };
  for (const m of cut) {
    if (m.role === 'user') {
      account.calls += occurrences(m.content, CALL_BLOCK);
      account.summaries += occurrences(m.content, SUMMARY_REQUEST);
      continue;
    }
    for (const t of m.content.matchAll(/<title>([^<]{1,500})<\/title>/g)) {
      const title = t[1]!.replace(/\s+/g, ' ').trim().slice(0, TITLE_CHARS);
      if (title) account.titles.push(title);
    }
    if (account.titles.length > NOTE_TITLES * 4) account.titles.splice(0, account.titles.length - NOTE_TITLES);
  }
  account.titles = account.titles.slice(-NOTE_TITLES);
  return account;
}

/** Tells the observer what the conversation no longer shows, so it neither asks about it nor records it again. */
export function cutNote(c: CutAccount): string {
  const calls = c.calls === 1 ? '1 tool call was cut' : `${c.calls} tool calls were cut`;
  const summaries =
    c.summaries === 0 ? '' : c.summaries === 1 ? ' (and 1 summary request)' : ` (and ${c.summaries} summary requests)`;
  const lines = [
    `Earlier in this session ${calls}${summaries} from this conversation to fit the model's window. Everything in them is recorded already: do not record it again.`,
  ];
  if (c.titles.length) lines.push('The last observations recorded for them:', ...c.titles.map((t) => `- ${t}`));
  return lines.join('\n').slice(0, NOTE_MAX_CHARS);
}
