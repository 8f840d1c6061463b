// When the SessionDO's next alarm comes. One alarm per object: it is brought forward when work is due sooner,
// and planned from the buffer's state after each turn (ready work, events waiting for their prompt, retention).
import type { EventBuffer } from './buffer';
import { TURN_MAX_CHARS, TURN_MAX_EVENTS } from './policy';
import { WAIT_FOR_PROMPT_MS } from './refile';
import { retentionStep } from './retention';

/**
 * How long ready work that does not fill a turn waits for more: events that stream in together (a burst of
 * tool calls, parallel subagents) are observed in fewer, fuller turns, and each turn costs an observer call,
 * a D1 write, a vector index update and the team slot's two round trips. No event waits longer than this for
 * its turn to start; a full turn (or a backlog) starts at once.
 */
export const GATHER_MS = 150;

/**
 * The farthest a session's alarm is ever set while a turn runs. The turn sets it when it starts and an alarm
 * that finds the turn still running sets it again, so if the object dies mid-turn (a deploy restarts every
 * object, an isolate is evicted) the alarm wakes a new instance within this long, and the new instance observes
 * the turn's events again at once. An alarm during a long observer call costs one short invocation.
 */
export const RESUME_MS = 5_000;

/** When the ready work should be observed: at once when it fills a turn, else once its oldest event has gathered company. */
export function readyDue(b: EventBuffer, now: number): number | null {
  const r = b.ready();
  if (r.oldestAt === null) return null;
  const full = r.count >= TURN_MAX_EVENTS || r.chars >= TURN_MAX_CHARS;
  return full ? now : Math.max(now, r.oldestAt + GATHER_MS);
}

/** Where the session's storage stands on retention (see retention.ts). */
export function retentionOf(b: EventBuffer, keepMs: number, now: number): ReturnType<typeof retentionStep> {
  return retentionStep(
    { endedAt: b.get<number | null>('ended_received_at', null), pending: b.counts(null).pending },
    keepMs,
    now,
  );
}

export class SessionAlarms {
  /** `buffer` is read on each call: the DO opens a new one when it empties its storage. */
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly buffer: () => EventBuffer,
    private readonly keepMs: number,
  ) {}

  at(time: number): Promise<void> {
    return this.storage.setAlarm(time);
  }

  /**
   * Makes sure an alarm comes by the time work is due: an earlier alarm is kept, a later one brought forward.
   * While this instance runs a turn the alarm stays within RESUME_MS (the turn plans the next one when it
   * ends). The alarm is read before the lease: a turn that ends while we wait must not leave us aiming at a
   * lease that is gone.
   */
  async ensure(now: number, waiting = false): Promise<void> {
    const b = this.buffer();
    const current = await this.storage.getAlarm();
    const lease = b.lease(now);
    const due = lease
      ? now + RESUME_MS
      : waiting
        ? now + WAIT_FOR_PROMPT_MS
        : Math.max(readyDue(b, now) ?? now, b.get<number>('backoff_until', 0));
    if (current === null || current > due) await this.storage.setAlarm(due);
  }

  /** Plans the next alarm from what the buffer holds; none when nothing is left to do. */
  async next(): Promise<void> {
    const due = this.#due(Date.now());
    if (due === null) await this.storage.deleteAlarm();
    else await this.storage.setAlarm(due);
  }

  /**
   * A new instance's alarm: the one planned from what the buffer holds (now, with `workLeft`: after-store work
   * an earlier instance left), unless an earlier one is set. An alarm set by the instance before (far ahead
   * for a turn it ran, or lost with it) never holds the work back.
   */
  async resume(now: number, workLeft = false): Promise<void> {
    const due = workLeft ? now : this.#due(now);
    if (due === null) return;
    const current = await this.storage.getAlarm();
    if (current === null || current > due) await this.storage.setAlarm(due);
  }

  #due(now: number): number | null {
    const b = this.buffer();
    const ready = readyDue(b, now);
    if (ready !== null) return Math.max(ready, b.get<number>('backoff_until', 0));
    // Only waiting events: wake when the oldest has waited long enough to be filed by its time.
    const waiting = b.oldestWaiting();
    if (waiting !== null) return waiting + WAIT_FOR_PROMPT_MS;
    // Nothing left to observe: an ended session's storage goes once its retention time has passed.
    const step = retentionOf(b, this.keepMs, now);
    return step.kind === 'keep' ? null : step.kind === 'wait' ? step.at : now;
  }
}
