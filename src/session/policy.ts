// Pure rules of the observer loop: which pending events form the next turn, and how long to wait after a failure.
import { PROBE_FIRST_MS, type BackoffKind } from '../slots/observer-health';
import type { ObserverFailureKind } from '../observer/types';
import type { PendingRow } from './types';

export const TURN_MAX_EVENTS = 20;
export const TURN_MAX_CHARS = 48_000;
/** Tries per event for failures that may be the event's fault; then it goes to the dead-letter table. */
export const MAX_ATTEMPTS = 5;
/**
 * Turns an event was in when its object died (a turn past 30 s of CPU or 128 MB is cut off with it, every time);
 * then it goes to the dead letters, so one such turn is sent to the (paid) observer at most this many times.
 */
export const MAX_TURN_DEATHS = 3;
/** An event that failed this often is sent alone, so one poisonous event cannot sink its neighbours. */
export const ISOLATE_AFTER = 2;

export interface TurnCaps {
  maxEvents: number;
  maxChars: number;
}

/**
 * Picks the next turn's events. The head is the oldest event of the lowest prompt, tool events before the
 * prompt's summary (a summary must see everything its prompt did). Tool events join the head while they
 * share its filing key, up to the caps; a summary always goes alone.
 */
export function selectBatch(
  rows: readonly PendingRow[],
  caps: TurnCaps = { maxEvents: TURN_MAX_EVENTS, maxChars: TURN_MAX_CHARS },
): PendingRow[] {
  if (rows.length === 0) return [];
  const rank = (r: PendingRow) => [r.promptNumber, r.kind === 'summarize' ? 1 : 0, r.seq] as const;
  let head = rows[0]!;
  for (const r of rows) {
    const a = rank(r);
    const b = rank(head);
    if (a[0] < b[0] || (a[0] === b[0] && (a[1] < b[1] || (a[1] === b[1] && a[2] < b[2])))) head = r;
  }
  if (head.kind === 'summarize' || head.attempts >= ISOLATE_AFTER) return [head];
  const out: PendingRow[] = [head];
  let chars = head.chars;
  for (const r of rows) {
    if (out.length >= caps.maxEvents) break;
    if (r === head || r.kind !== 'observation' || r.groupKey !== head.groupKey || r.attempts >= ISOLATE_AFTER) continue;
    if (chars + r.chars > caps.maxChars) break;
    out.push(r);
    chars += r.chars;
  }
  return out.sort((a, b) => a.seq - b.seq);
}

export type FailureKind = ObserverFailureKind | 'store';

export interface FailurePlan {
  /** ms to wait before the next turn. */
  delayMs: number;
  /** Spends one try of each event's retry budget (failures that might be the events' fault). */
  countsAttempt: boolean;
  /** Account-wide conditions slow every session of the team. */
  shared: BackoffKind | null;
}

const SECOND = 1_000;
const MINUTE = 60 * SECOND;

/** `streak` is the number of failures in a row before this one (0 for the first). */
export function planFailure(kind: FailureKind, retryAfterMs: number | null, streak: number): FailurePlan {
  const exp = (base: number, cap: number) => Math.min(cap, base * 2 ** Math.min(streak, 10));
  switch (kind) {
    case 'rate_limit':
      return {
        delayMs: clamp(retryAfterMs ?? exp(15 * SECOND, 5 * MINUTE), SECOND, 15 * MINUTE),
        countsAttempt: false,
        shared: 'rate_limit',
      };
    case 'overloaded':
      return {
        delayMs: clamp(retryAfterMs ?? exp(5 * SECOND, 5 * MINUTE), SECOND, 15 * MINUTE),
        countsAttempt: false,
        shared: 'overloaded',
      };
    // None fixes itself: an admin must act (a refused key, a wrong model name or endpoint, an exhausted account).
    // Every session of the team fails alike until then, and dead-lettering the backlog meanwhile would turn a
    // typo into lost work. The team retries for ever through one probe at a time (slots/observer-health.ts);
    // the TeamDO's answer sets when this session tries again, and this delay applies only when it cannot answer.
    case 'spend_cap':
    case 'auth':
    case 'config':
      return { delayMs: PROBE_FIRST_MS, countsAttempt: false, shared: kind };
    case 'bad_request':
    case 'network':
    case 'server':
    case 'store':
      return { delayMs: exp(2 * SECOND, 2 * MINUTE), countsAttempt: true, shared: null };
  }
}

const clamp = (n: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, n));

/** When the observer answered for several tool calls, each observation takes the time of the call it most
 * likely describes: observers answer in order, so the i-th observation gets the i-th event's time (the last
 * event's time for any extra). Times stay real event times and keep the order of the work. */
export function observationTimes(eventTimes: readonly number[], count: number): number[] {
  if (eventTimes.length === 0) return [];
  return Array.from({ length: count }, (_, i) => eventTimes[Math.min(i, eventTimes.length - 1)]!);
}
