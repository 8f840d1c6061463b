// Fixed-window request counting, pure: the LimiterDO keeps one Window per bucket and passes `now`.

export interface Window {
  start: number;
  count: number;
}

export interface Verdict {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** ms until the current window ends (0 when allowed). */
  retryAfterMs: number;
}

/** Counts one request (or `cost` units of work) against `limit` per `windowMs`; a refused request is not counted. */
export function take(w: Window | undefined, now: number, limit: number, windowMs: number, cost = 1): { window: Window; verdict: Verdict } {
  const start = now - (now % windowMs);
  const current = w && w.start === start ? w : { start, count: 0 };
  const units = Math.max(1, Math.floor(cost));
  if (current.count + units > limit) {
    return { window: current, verdict: { allowed: false, limit, remaining: Math.max(0, limit - current.count), retryAfterMs: start + windowMs - now } };
  }
  const next = { start, count: current.count + units };
  return { window: next, verdict: { allowed: true, limit, remaining: limit - next.count, retryAfterMs: 0 } };
}
