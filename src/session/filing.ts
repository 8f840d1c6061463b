// Pure rule for which prompt an event belongs to: the prompt during which it happened, not the one that
// happened to be current when it arrived (async hooks and spool replays deliver events late and out of order).

/** What the SessionDO remembers of each prompt of its session (text aside). */
export interface PromptMark {
  promptNumber: number;
  promptId: string | null;
  occurredAt: number;
  /** The client's monotonic per-machine counter when the prompt was sent; orders events that share a ms. */
  clientSeq: number | null;
  private: boolean;
}

/** Where an event says it happened. */
export interface EventMark {
  promptId: string | null;
  occurredAt: number;
  clientSeq: number | null;
}

/** True when `p` started no later than `e` happened: time first, then the client's own counter on a tie. */
export function startedBy(
  p: Pick<PromptMark, 'occurredAt' | 'clientSeq'>,
  e: Pick<EventMark, 'occurredAt' | 'clientSeq'>,
): boolean {
  if (p.occurredAt !== e.occurredAt) return p.occurredAt < e.occurredAt;
  // Same millisecond: the counter decides when both carry one; without it the prompt is taken to come first
  // (a prompt's hook runs before any tool call of that prompt).
  if (p.clientSeq !== null && e.clientSeq !== null) return p.clientSeq < e.clientSeq;
  return true;
}

/** The latest prompt that started by the event's time (null: before the session's first prompt). */
export function promptAt(
  prompts: readonly PromptMark[],
  e: Pick<EventMark, 'occurredAt' | 'clientSeq'>,
): PromptMark | null {
  let best: PromptMark | null = null;
  for (const p of prompts) {
    if (!startedBy(p, e)) continue;
    if (!best || startedBy(best, p)) best = p;
  }
  return best;
}

/** `wait`: the event names a prompt whose own event has not arrived yet; it is held until it does. */
export type Filing = { kind: 'prompt'; prompt: PromptMark | null } | { kind: 'wait' };

/**
 * The prompt an event belongs to. The agent's own prompt id wins when the event carries one and that prompt
 * is known. An id that is not known yet, from a client that sends ids with its prompts, means the prompt's
 * own event is still on its way (it may be private): wait for it rather than guess. Otherwise the event's
 * time decides. Linear in the number of prompts.
 */
export function fileEvent(prompts: readonly PromptMark[], e: EventMark): Filing {
  const byTime = promptAt(prompts, e);
  if (e.promptId === null) return { kind: 'prompt', prompt: byTime };
  const byId = prompts.find((p) => p.promptId === e.promptId);
  if (byId) return { kind: 'prompt', prompt: byId };
  if (byTime === null || byTime.promptId !== null) return { kind: 'wait' };
  return { kind: 'prompt', prompt: byTime };
}
