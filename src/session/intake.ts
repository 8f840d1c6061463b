// Taking one hook event into the SessionDO's buffer. Synchronous SQL only: the dedupe check and the insert are
// one atomic step even with other calls interleaving. The answer says what the DO must then do about its alarm.
import type { EventBuffer } from './buffer';
import { fileEvent } from './filing';
import { refileForPrompt, targetOf } from './refile';
import type { BufferedEvent, EndInput, EnqueueInput, EnqueueResult, InitInput } from './types';

/** After an event: nothing, an alarm by now (`due`), by the end of a wait for a prompt (`wait`), or the next one planned from scratch. */
export type Wake = 'none' | 'due' | 'wait' | 'next';

export interface Intake {
  result: EnqueueResult;
  wake: Wake;
}

/** The session this object serves, recorded by its first event. */
export interface SessionRef {
  teamId: number;
  sessionKey: string;
}

export const sessionOf = (b: EventBuffer): SessionRef | null => b.get<SessionRef | null>('session', null);

/** Accepts one hook event. Repeated event ids get the first answer. */
export function intake(b: EventBuffer, input: EnqueueInput, now: number): Intake {
  const seen = b.seenPrompt(input.eventId);
  if (seen !== null) return { result: { accepted: true, duplicate: true, promptNumber: seen }, wake: 'none' };
  if (sessionOf(b) === null)
    b.set('session', { teamId: input.snapshot.teamId, sessionKey: input.snapshot.sessionKey } satisfies SessionRef);
  if (b.get<string | null>('mode', null) !== input.modeId) b.set('mode', input.modeId);
  if (input.kind === 'init') return intakePrompt(b, input, now);
  if (input.kind === 'end') return intakeEnd(b, input, now);
  return intakeEvent(b, input, now);
}

type Mark = { promptId: string | null; occurredAt: number; clientSeq: number | null };
const markOf = (input: EnqueueInput): Mark => ({
  promptId: input.promptId ?? null,
  occurredAt: input.occurredAt,
  clientSeq: input.clientSeq ?? null,
});

function intakePrompt(b: EventBuffer, input: InitInput, now: number): Intake {
  const mark = markOf(input);
  // The same prompt sent again under another event id (a client retry) is still one prompt.
  const known = mark.promptId !== null ? b.promptById(mark.promptId) : null;
  if (known !== null) {
    b.markSeen(input.eventId, known, now);
    return { result: { accepted: true, duplicate: true, promptNumber: known }, wake: 'none' };
  }
  const n = b.currentPrompt() + 1;
  const prompt = { ...mark, promptNumber: n, private: input.private };
  b.addPrompt(prompt, input.prompt);
  b.markSeen(input.eventId, n, now);
  // Events that happened during this prompt but arrived before it move under it (or go, if it is private).
  const moved = refileForPrompt(b, prompt);
  return { result: { accepted: true, duplicate: false, promptNumber: n }, wake: moved > 0 ? 'due' : 'none' };
}

function intakeEnd(b: EventBuffer, input: EndInput, now: number): Intake {
  const n = b.currentPrompt();
  b.markSeen(input.eventId, n, now);
  b.set('ended_at', input.occurredAt);
  b.set('ended_received_at', now);
  return { result: { accepted: true, duplicate: false, promptNumber: n }, wake: 'next' };
}

function intakeEvent(b: EventBuffer, input: BufferedEvent, now: number): Intake {
  const filing = fileEvent(b.promptMarks(), markOf(input));
  const n = targetOf(filing);
  b.markSeen(input.eventId, n, now);
  // The prompt during which it happened is private: nothing its turn did is kept, not even in the buffer.
  if (filing.kind === 'prompt' && filing.prompt?.private)
    return { result: { accepted: false, duplicate: false, promptNumber: n, skipped: 'private' }, wake: 'none' };
  // A subagent's stop is not the end of the user's request; the main agent's summary covers it.
  if (input.kind === 'summarize' && input.agentId)
    return {
      result: { accepted: false, duplicate: false, promptNumber: n, skipped: 'subagent_summary' },
      wake: 'none',
    };
  b.insert(input, n, now);
  return {
    result: { accepted: true, duplicate: false, promptNumber: n },
    wake: filing.kind === 'wait' ? 'wait' : 'due',
  };
}
