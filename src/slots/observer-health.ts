// The team observer's health as a pure state machine (the TeamDO stores it, team-do.ts), and the words a user
// sees when memory has stopped or fallen behind. Times are passed in; nothing here reads a clock.

/** Provider conditions that slow every session of a team (they share one account). */
export type BackoffKind = 'rate_limit' | 'overloaded' | 'spend_cap' | 'auth' | 'config';

/**
 * `failing`: the provider refuses every call until someone acts (a refused key, an unknown model or endpoint, an
 * exhausted account); `backing_off`: it asked us to slow down and will take calls again by itself.
 */
export type ObserverState = 'ok' | 'backing_off' | 'failing';

const FAILING: ReadonlySet<BackoffKind> = new Set(['auth', 'config', 'spend_cap']);
export const isFailingKind = (kind: BackoffKind): boolean => FAILING.has(kind);

/**
 * While failing, one session's turn is let through as a probe this long after the last refusal, doubling from
 * PROBE_FIRST_MS up to PROBE_MAX_MS; every other session waits. A refused call is not billed, so a probe costs
 * one request; and memory resumes at most PROBE_MAX_MS after the fix, on its own (the issue asks for 5 minutes).
 */
export const PROBE_FIRST_MS = 30_000;
export const PROBE_MAX_MS = 4 * 60_000;
export function probeDelay(failuresInARow: number): number {
  return Math.min(PROBE_MAX_MS, PROBE_FIRST_MS * 2 ** Math.max(0, Math.min(failuresInARow - 1, 10)));
}

/** Events waiting longer than this make the context index, `cairn status` and the viewer say memory is behind. */
export const BEHIND_MS = 10 * 60_000;

/** What the TeamDO keeps (one row). */
export interface HealthRecord {
  kind: BackoffKind | null;
  /** The provider's error, e.g. `401 authentication_error`; null when the provider gave none. */
  code: string | null;
  /** The provider's own message (API errors only: never observer output), cut to 200 characters. */
  detail: string | null;
  /** When the current episode began (the first refusal after things were well). */
  since: number | null;
  /** Until when sessions wait: the end of a back-off, or the next probe while failing. */
  until: number;
  /** Refusals in a row in this episode. */
  failures: number;
  lastOkAt: number | null;
}

export const HEALTHY: HealthRecord = {
  kind: null,
  code: null,
  detail: null,
  since: null,
  until: 0,
  failures: 0,
  lastOkAt: null,
};

export function stateOf(h: HealthRecord, now: number): ObserverState {
  if (h.kind && isFailingKind(h.kind)) return 'failing';
  return h.until > now ? 'backing_off' : 'ok';
}

export interface FailureReport {
  kind: BackoffKind;
  code: string | null;
  detail: string | null;
  /** When the provider said to try again (rate limits), or the session's own plan. */
  until: number;
}

/**
 * A refusal reported by a session. A failing kind waits for the next probe (probeDelay); a back-off only ever
 * extends (a shorter report never cuts a longer one short), except that a back-off reported while failing means
 * the provider took the key again (a 429 is answered after authentication), so the failing episode ends.
 */
export function onFailure(h: HealthRecord, r: FailureReport, now: number): HealthRecord {
  const fresh = stateOf(h, now) === 'ok';
  const since = fresh || h.since === null ? now : h.since;
  const detail = r.detail ? r.detail.slice(0, 200) : null;
  if (isFailingKind(r.kind)) {
    const failures = fresh || !h.kind || !isFailingKind(h.kind) ? 1 : h.failures + 1;
    return { ...h, kind: r.kind, code: r.code, detail, since, until: now + probeDelay(failures), failures };
  }
  const wasFailing = h.kind !== null && isFailingKind(h.kind);
  const until = wasFailing ? r.until : Math.max(h.until, r.until);
  return {
    ...h,
    kind: r.kind,
    code: r.code,
    detail,
    since: wasFailing ? now : since,
    until,
    failures: fresh || wasFailing ? 1 : h.failures + 1,
  };
}

/** A call went through while the team was not well: the episode ends. */
export function onRecovered(now: number): HealthRecord {
  return { ...HEALTHY, lastOkAt: now };
}

/**
 * Whether a session asking for a slot now must wait, and whether its turn is the probe. While failing, the
 * first session to ask once `until` has passed is the probe; `until` moves on by one probe delay so that the
 * others keep waiting for its answer.
 */
export function gate(
  h: HealthRecord,
  now: number,
): { wait: false; probe: boolean; next: HealthRecord } | { wait: true; retryAt: number } {
  if (h.until > now) return { wait: true, retryAt: h.until };
  if (stateOf(h, now) !== 'failing') return { wait: false, probe: false, next: h };
  return { wait: false, probe: true, next: { ...h, until: now + probeDelay(h.failures + 1) } };
}

/** What a session reports with each slot request or release: its backlog. */
export interface Backlog {
  pending: number;
  /** When its oldest pending event arrived (null: none pending). */
  oldestAt: number | null;
  deadLetters: number;
}

/** The team's backlog, summed over its sessions' latest reports. */
export interface TeamBacklog {
  sessions: number;
  pending: number;
  oldestAt: number | null;
  deadLetters: number;
}

/** The team's observer as shown to admins (`GET /api/admin/health`) and, without detail, to every device. */
export interface ObserverHealth {
  state: ObserverState;
  kind: BackoffKind | null;
  code: string | null;
  detail: string | null;
  since: number | null;
  /** When the next try is due (a back-off's end or the next probe); null when nothing waits. */
  retry_at: number | null;
  last_ok_at: number | null;
  backlog: TeamBacklog;
  /** One sentence a user can act on when memory is paused, delayed or behind; null when all is well. */
  notice: string | null;
}

const clock = (ms: number) => `${new Date(ms).toISOString().slice(11, 16)} UTC`;
const minutes = (ms: number) => `${Math.max(1, Math.round(ms / 60_000))} min`;

/** Why a failing provider refuses, in words, and what fixes it. */
function failingWords(kind: BackoffKind, code: string | null): string {
  const c = code ? ` (${code})` : '';
  switch (kind) {
    case 'auth':
      return `the observer's API key was refused${c}; an admin must fix the key (wrangler secret put ANTHROPIC_API_KEY, or the key of the configured provider), then run \`cairn admin observer retry\``;
    case 'config':
      return `the observer's model or endpoint was not found${c}; an admin must fix OBSERVER_MODEL or the base URL, then run \`cairn admin observer retry\``;
    default:
      return `the observer's provider account is out of credit or over its spend limit${c}; an admin must raise it, then run \`cairn admin observer retry\``;
  }
}

/**
 * The notice, or null: paused (failing), delayed (backing off) or behind (events waiting over BEHIND_MS), in
 * that order of weight. It always says that nothing is lost, because nothing is.
 */
export function memoryNotice(
  h: Pick<ObserverHealth, 'state' | 'kind' | 'code' | 'since' | 'retry_at' | 'backlog'>,
  now: number,
): string | null {
  const waiting = h.backlog.pending
    ? ` ${h.backlog.pending} events are waiting and nothing is lost.`
    : ' New events are kept until then.';
  if (h.state === 'failing' && h.kind) {
    const since = h.since ? ` since ${clock(h.since)}` : '';
    return `Memory is paused${since}: ${failingWords(h.kind, h.code)}. cairn tries again every few minutes and resumes by itself once it works.${waiting}`;
  }
  if (h.state === 'backing_off') {
    const why = h.kind === 'overloaded' ? 'is overloaded' : 'asked cairn to slow down';
    const next = h.retry_at ? ` at about ${clock(h.retry_at)}` : '';
    return `Memory is delayed: the observer's provider ${why}${h.code ? ` (${h.code})` : ''}; observing resumes by itself${next}.${waiting}`;
  }
  if (h.backlog.oldestAt !== null && now - h.backlog.oldestAt > BEHIND_MS) {
    return `Memory is behind: ${h.backlog.pending} events have waited ${minutes(now - h.backlog.oldestAt)} to be observed; nothing is lost. An admin can see why with \`cairn admin health\`.`;
  }
  return null;
}
