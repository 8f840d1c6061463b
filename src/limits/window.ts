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

/** Counts one request against `limit` per `windowMs`; a refused request is not counted. */
export function take(w: Window | undefined, now: number, limit: number, windowMs: number): { window: Window; verdict: Verdict } {
  const start = now - (now % windowMs);
  const current = w && w.start === start ? w : { start, count: 0 };
  if (current.count >= limit) {
    return { window: current, verdict: { allowed: false, limit, remaining: 0, retryAfterMs: start + windowMs - now } };
  }
  const next = { start, count: current.count + 1 };
  return { window: next, verdict: { allowed: true, limit, remaining: limit - next.count, retryAfterMs: 0 } };
}
