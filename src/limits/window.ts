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

/**
 * Counts one request (or `cost` units of work) against `limit` per `windowMs`; a refused request is not
 * counted. All or nothing, unless `partial`: then as many units as are left are granted (`granted`).
 */
export function take(
  w: Window | undefined,
  now: number,
  limit: number,
  windowMs: number,
  cost = 1,
  partial = false,
): { window: Window; verdict: Verdict; granted: number } {
  const start = now - (now % windowMs);
  const current = w && w.start === start ? w : { start, count: 0 };
  const units = Math.max(1, Math.floor(cost));
  const available = Math.max(0, limit - current.count);
  const granted = partial ? Math.min(units, available) : units <= available ? units : 0;
  if (granted === 0) {
    return {
      window: current,
      granted,
      verdict: { allowed: false, limit, remaining: available, retryAfterMs: start + windowMs - now },
    };
  }
  const next = { start, count: current.count + granted };
  return { window: next, granted, verdict: { allowed: true, limit, remaining: limit - next.count, retryAfterMs: 0 } };
}
