// When an ended session's Durable Object may forget everything it holds (pure rules; the DO applies them).

export const DEFAULT_SESSION_RETENTION_SECONDS = 86_400;

/** `SESSION_RETENTION_SECONDS` as ms; absent or not a non-negative number → one day. */
export function retentionMs(raw: string | undefined): number {
  const n = raw === undefined || raw.trim() === '' ? NaN : Number(raw);
  return (Number.isFinite(n) && n >= 0 ? n : DEFAULT_SESSION_RETENTION_SECONDS) * 1_000;
}

export interface RetentionState {
  /** Server time the session's end event arrived; null while the session has not ended. */
  endedAt: number | null;
  /** Buffered events of any kind (waiting, ready or claimed). */
  pending: number;
}

/**
 * `keep`: nothing to do (still running or still being observed); `wait`: come back at `at`; `empty`: the
 * session ended, everything was observed and the retention time has passed.
 */
export function retentionStep(
  s: RetentionState,
  keepMs: number,
  now: number,
): { kind: 'keep' } | { kind: 'wait'; at: number } | { kind: 'empty' } {
  if (s.endedAt === null || s.pending > 0) return { kind: 'keep' };
  const at = s.endedAt + keepMs;
  return now >= at ? { kind: 'empty' } : { kind: 'wait', at };
}
