// Content hashes that make a turn's rows idempotent: the same observation written twice is stored once.
import { sha256Hex } from '../lib/crypto';
import type { ParsedSummary } from '../observer/types';
import type { ObservationContent } from '#shared/wire/records';

const SEP = '\u0000';

/** First 16 hex chars of sha256(session id, title, narrative): unique per session in D1. */
export async function observationHash(
  sessionDbId: number,
  o: Pick<ObservationContent, 'title' | 'narrative'>,
): Promise<string> {
  return (await sha256Hex([String(sessionDbId), o.title ?? '', o.narrative ?? ''].join(SEP))).slice(0, 16);
}

export async function summaryHash(sessionDbId: number, promptNumber: number, s: ParsedSummary): Promise<string> {
  const parts = [
    String(sessionDbId),
    String(promptNumber),
    s.request,
    s.investigated,
    s.learned,
    s.completed,
    s.nextSteps,
    s.notes,
  ];
  return (await sha256Hex(parts.map((p) => p ?? '').join(SEP))).slice(0, 16);
}
