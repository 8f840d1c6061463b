// Applies the filing rule (filing.ts) to the SessionDO's buffer: a new prompt takes the buffered events that
// happened during it, a private prompt's events are dropped, and events that waited too long for their
// prompt are filed by their time. Synchronous SQL only (called inside enqueue and the alarm).
import { WAITING, type EventBuffer } from './buffer';
import { fileEvent, promptAt, type Filing, type PromptMark } from './filing';
import type { PendingRow } from './types';

/** How long an event that names a prompt not seen yet waits for it before its time decides. */
export const WAIT_FOR_PROMPT_MS = 5 * 60_000;

/** The group key of an event filed under another prompt (the key's other parts do not change). */
export function regroup(groupKey: string, promptNumber: number): string {
  const parts = JSON.parse(groupKey) as unknown[];
  parts[2] = promptNumber;
  return JSON.stringify(parts);
}

export const targetOf = (f: Filing): number => (f.kind === 'wait' ? WAITING : (f.prompt?.promptNumber ?? 0));

/**
 * Moves one buffered event to where `filing` puts it. Unclaimed events of a private prompt are deleted at
 * once; claimed ones are re-filed and the turn that holds them discards them (see ObserverTurns in turn.ts).
 * Returns true when the event changed place.
 */
function apply(b: EventBuffer, row: PendingRow, filing: Filing): boolean {
  const target = targetOf(filing);
  if (filing.kind === 'prompt' && filing.prompt?.private && row.claimId === null) {
    b.drop(row.seq);
    return true;
  }
  if (target === row.promptNumber) return false;
  b.refile(row.seq, target, regroup(row.groupKey, target));
  return true;
}

/** After a prompt arrived: the buffered events that belong to it move under it. Returns how many moved. */
export function refileForPrompt(b: EventBuffer, prompt: PromptMark): number {
  const marks = b.promptMarks();
  let moved = 0;
  for (const row of b.refileCandidates(prompt.promptId, prompt.occurredAt)) {
    if (apply(b, row, fileEvent(marks, row))) moved++;
  }
  return moved;
}

/** Events whose prompt never arrived are filed by their time after `WAIT_FOR_PROMPT_MS`. */
export function fileOverdue(b: EventBuffer, now: number): number {
  const marks = b.promptMarks();
  let moved = 0;
  for (const row of b.overdueWaiting(now - WAIT_FOR_PROMPT_MS)) {
    if (apply(b, row, { kind: 'prompt', prompt: promptAt(marks, row) })) moved++;
  }
  return moved;
}
