// Delivering events: every event is written to the spool first, then the spool is sent, oldest first.
import { call, errorText, Unreachable, type HttpResult } from '../net/http';
import { readState, updateState } from '../state';
import { killPoint } from '../util/kill-point';
import { acquireLock } from './lock';
import type { EventKind, Spool, SpooledEvent } from './spool';

export const ROUTES: Record<EventKind, string> = {
  init: '/api/sessions/init',
  observation: '/api/sessions/observations',
  summarize: '/api/sessions/summarize',
  end: '/api/sessions/end',
};

export interface DeliveryContext {
  url: string | null;
  token: string | null;
  device: string | null;
  spool: Spool;
  stateDir: string;
  now: () => number;
  /** One reused connection for all calls (the background sender); hooks open one per call. */
  keepAlive?: boolean;
}

export type Outcome =
  | { status: 'delivered'; result: HttpResult }
  | { status: 'retry'; reason: string }
  | { status: 'rejected'; reason: string };

const BATCH_MAX_EVENTS = 200;
const BATCH_MAX_BYTES = 800_000;
const BATCH_RECHECK_MS = 3_600_000;

/** 2xx delivered; unreachable, 5xx, 429, auth and missing routes retried later; other 4xx refused for good. */
export function classify(r: HttpResult): Outcome {
  if (r.status >= 200 && r.status < 300) return { status: 'delivered', result: r };
  if (
    r.status >= 500 ||
    r.status === 429 ||
    r.status === 401 ||
    r.status === 403 ||
    r.status === 404 ||
    r.status === 408
  ) {
    return { status: 'retry', reason: errorText(r) };
  }
  return { status: 'rejected', reason: errorText(r) };
}

export async function sendOne(ctx: DeliveryContext, event: SpooledEvent, timeoutMs: number): Promise<Outcome> {
  if (!ctx.url || !ctx.token) return { status: 'retry', reason: 'not logged in (run: cairn login --url … --token …)' };
  try {
    const r = await call(ctx.url, ROUTES[event.kind], {
      token: ctx.token,
      device: ctx.device,
      body: event.body,
      timeoutMs,
      keepAlive: ctx.keepAlive,
    });
    return classify(r);
  } catch (e) {
    return { status: 'retry', reason: e instanceof Unreachable ? `server unreachable: ${e.reason}` : String(e) };
  }
}

function note(ctx: DeliveryContext, outcome: Outcome): void {
  if (outcome.status === 'delivered') {
    const s = readState(ctx.stateDir);
    if (s.lastError) updateState(ctx.stateDir, { lastError: null, lastDeliveredAt: ctx.now() });
  } else {
    updateState(ctx.stateDir, { lastError: { at: ctx.now(), message: outcome.reason } });
  }
}

/** How long a hook waits for another process's replay to finish before leaving its event to the next one. */
const REPLAY_WAIT_MS = 300;

/**
 * The hook path: spool first, then send. Claude Code may end a hook at any moment (in `claude -p` it ends
 * async hooks when it exits), so the event is on disk before any network work starts; the cursor moves only
 * after the server acknowledged it. Killed anywhere, an event is either not yet written (nothing was
 * promised), waiting in the spool for the next hook or `cairn flush`, or delivered and perhaps sent once
 * more, which the server recognises by event_id. The same order also keeps one machine's events in the
 * order they happened (prompt numbers).
 */
export async function deliver(ctx: DeliveryContext, event: SpooledEvent, deadline: number): Promise<Outcome> {
  if (ctx.spool.append(event) === null) {
    // Spool full (the server has been away a long time): still try this one directly, else it is lost.
    const outcome = await sendOne(ctx, event, deadline - ctx.now());
    if (outcome.status !== 'delivered')
      updateState(ctx.stateDir, {
        lastError: { at: ctx.now(), message: `spool full: event ${event.body.event_id} dropped` },
      });
    return outcome;
  }
  killPoint('appended');
  const r = await replay(ctx, deadline, Math.min(REPLAY_WAIT_MS, Math.max(0, deadline - ctx.now() - 50)));
  if (r.retryReason) return { status: 'retry', reason: r.retryReason };
  return r.busy || r.remaining
    ? { status: 'retry', reason: 'queued' }
    : { status: 'delivered', result: { status: 200, text: '', headers: {} } };
}

export interface ReplayReport {
  delivered: number;
  rejected: number;
  remaining: number;
  busy: boolean;
  retryReason: string | null;
}

/**
 * Sends spooled events oldest first until the spool is empty, the server fails, or the deadline comes.
 * One process replays at a time; `waitMs` is how long to wait for another one to finish first.
 */
export async function replay(ctx: DeliveryContext, deadline: number, waitMs = 0): Promise<ReplayReport> {
  const report: ReplayReport = { delivered: 0, rejected: 0, remaining: 0, busy: false, retryReason: null };
  const release = acquireLock(ctx.spool.replayLockFile, waitMs);
  if (!release) {
    report.busy = true;
    report.remaining = ctx.spool.stats().pendingEvents;
    return report;
  }
  killPoint('replay-locked');
  try {
    while (ctx.now() < deadline - 20) {
      const batch = ctx.spool.readBatch(BATCH_MAX_EVENTS, BATCH_MAX_BYTES);
      if (!batch.length) break;
      const outcomes = await sendBatch(
        ctx,
        batch.map((b) => b.event),
        deadline,
      );
      killPoint('sent');
      let count = 0;
      let bytes = 0;
      for (let i = 0; i < batch.length; i++) {
        const outcome = outcomes[i];
        if (!outcome || outcome.status === 'retry') {
          report.retryReason = outcome?.reason ?? 'stopped';
          break;
        }
        if (outcome.status === 'delivered') report.delivered++;
        else {
          report.rejected++;
          ctx.spool.bury(batch[i]!.event, outcome.reason);
        }
        count++;
        bytes += batch[i]!.bytes;
      }
      if (count) ctx.spool.advance(count, bytes);
      killPoint('advanced');
      if (report.retryReason) break;
    }
  } finally {
    release();
  }
  if (report.delivered || report.retryReason) {
    note(
      ctx,
      report.retryReason
        ? { status: 'retry', reason: report.retryReason }
        : { status: 'delivered', result: { status: 200, text: '', headers: {} } },
    );
  }
  report.remaining = ctx.spool.stats().pendingEvents;
  return report;
}

interface BatchAnswer {
  results?: Array<{ event_id?: string; accepted?: boolean; duplicate?: boolean; error?: unknown }>;
}

const TRANSIENT_CODE = /internal|unavailable|rate|busy|timeout|overload|retry/i;

/** One outcome per event, in order; undefined where nothing is known (stop there). */
export async function sendBatch(
  ctx: DeliveryContext,
  events: Array<SpooledEvent | null>,
  deadline: number,
): Promise<Array<Outcome | undefined>> {
  const out: Array<Outcome | undefined> = events.map((e) =>
    e ? undefined : { status: 'rejected', reason: 'unreadable spool line' },
  );
  const real = events.flatMap((e, i) => (e ? [{ e, i }] : []));
  if (!real.length) return out;
  const state = readState(ctx.stateDir);
  const batchOk = !(state.batchUnsupportedUntil && state.batchUnsupportedUntil > ctx.now());
  if (batchOk && ctx.url && ctx.token && real.length > 1) {
    try {
      const body = { events: real.map(({ e }) => ({ kind: e.kind, ...e.body })) };
      const r = await call(ctx.url, '/api/events/batch', {
        token: ctx.token,
        device: ctx.device,
        body,
        timeoutMs: deadline - ctx.now(),
        keepAlive: ctx.keepAlive,
      });
      if (r.status === 404) {
        updateState(ctx.stateDir, { batchUnsupportedUntil: ctx.now() + BATCH_RECHECK_MS });
      } else if (r.status === 200) {
        const answer = JSON.parse(r.text) as BatchAnswer;
        const byId = new Map((answer.results ?? []).map((x) => [x.event_id, x]));
        for (const { e, i } of real) {
          const res = byId.get(e.body.event_id);
          if (!res) continue;
          if (res.error === undefined || res.error === null) out[i] = { status: 'delivered', result: r };
          else {
            const reason = typeof res.error === 'string' ? res.error : JSON.stringify(res.error);
            out[i] = TRANSIENT_CODE.test(reason) ? { status: 'retry', reason } : { status: 'rejected', reason };
          }
        }
        return out;
      } else {
        const outcome = classify(r);
        // A batch refused as a whole (e.g. too large) is retried event by event below.
        if (outcome.status === 'retry') return fillFirst(out, outcome);
      }
    } catch (e) {
      return fillFirst(out, {
        status: 'retry',
        reason: e instanceof Unreachable ? `server unreachable: ${e.reason}` : String(e),
      });
    }
  }
  for (const { e, i } of real) {
    if (ctx.now() >= deadline - 20) break;
    const outcome = await sendOne(ctx, e, deadline - ctx.now());
    out[i] = outcome;
    if (outcome.status === 'retry') break;
  }
  return out;
}

function fillFirst(out: Array<Outcome | undefined>, outcome: Outcome): Array<Outcome | undefined> {
  const i = out.findIndex((o) => o === undefined);
  if (i >= 0) out[i] = outcome;
  return out;
}
