// Ingest API: session events from the hooks client, answered at once and handed to the SessionDO.
import { Hono } from 'hono';
import type { Context } from 'hono';
import { endTime, startTime } from 'hono/timing';
import { findVisibleSession } from '../db/sessions';
import { settingsFor } from '../db/team-settings';
import type { AppEnv } from '../auth/types';
import { AppError, notFound } from '../lib/errors';
import { jsonBody, parseWith } from '../lib/validate';
import { limitFor, limitHeaders } from '../limits/rate-limit';
import type { Verdict } from '../limits/window';
import { sessionStub } from '../session/session-do';
import { acceptEvent, acceptEvents, type IngestContext } from './accept';
import {
  EVENT_SCHEMAS,
  EventBatch,
  EndEvent,
  InitEvent,
  ObservationEvent,
  SummarizeEvent,
  type IngestEvent,
} from './schemas';
import type { BatchResult, EventAck } from '#shared/wire/events';
import { shardDb, shardOf, teamDb } from '../db/shards';
import { errorText, log } from '../lib/log';
import { enterTeamWritePlacement } from '../slots/enter-write';

/** Mounted at /api/sessions: writes need the `ingest` scope, reads `ingest` or `read` (guards in src/app.ts). */
export const sessionRoutes = new Hono<AppEnv>();
/** Mounted at /api/events (scope `ingest`). */
export const eventRoutes = new Hono<AppEnv>();

/**
 * The request's context, after the team's write gate let it through for `sessionKeys` (503 `team_moving` while
 * the team moves; the gate also lists the sessions, so a move knows which session objects to quiesce).
 */
async function context(c: Context<AppEnv>, sessionKeys: string[]): Promise<IngestContext> {
  const auth = c.get('auth');
  const placement = await enterTeamWritePlacement(c.env, auth.teamId, sessionKeys);
  const shard = placement.shard ?? (await shardOf(c.env, auth.teamId));
  const db = shardDb(c.env, shard);
  return {
    env: c.env,
    auth,
    db,
    // A team moved away and back is on the same database under new ids: the move's time tells the two apart; a
    // forgotten session or project is gone: the row epoch tells before from after.
    placement: `${shard}@${placement.placedAt ?? 0}#${placement.rowEpoch}`,
    settings: await settingsFor(db, auth),
    now: Date.now(),
    ingestLimit: limitFor(c.env, auth, 'ingest'),
  };
}

for (const [path, schema] of [
  ['/init', InitEvent],
  ['/observations', ObservationEvent],
  ['/summarize', SummarizeEvent],
  ['/end', EndEvent],
] as const) {
  sessionRoutes.post(path, jsonBody(schema), async (c) => {
    const event = c.req.valid('json') as IngestEvent;
    startTime(c, 'session', 'session object');
    const { ack, verdict } = await acceptEvent(await context(c, [event.session_id]), event);
    endTime(c, 'session');
    if (verdict) limitHeaders(c, verdict);
    return c.json(ack, 202);
  });
}

/** Spool replay: each event answered on its own (one bad event does not stop the rest); one SessionDO call per session. */
eventRoutes.post('/batch', jsonBody(EventBatch), async (c) => {
  const { events } = c.req.valid('json');
  // Checked one by one (a bad event is answered on its own), then handed over one SessionDO call per session.
  const parsed = events.map((raw): { eventId: string | null; event?: IngestEvent; error?: unknown } => {
    const rec = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
    const eventId = typeof rec.event_id === 'string' ? rec.event_id : null;
    const kind = rec.kind;
    if (kind !== 'init' && kind !== 'observation' && kind !== 'summarize' && kind !== 'end') {
      return {
        eventId,
        error: new AppError(400, 'invalid_body', 'kind: must be one of init, observation, summarize, end'),
      };
    }
    try {
      return { eventId, event: parseWith(EVENT_SCHEMAS[kind], rec, 'invalid_body') as IngestEvent };
    } catch (error) {
      return { eventId, error };
    }
  });
  const accepted = parsed.flatMap((p) => (p.event ? [p.event] : []));
  const ctx = await context(
    c,
    accepted.map((e) => e.session_id),
  );
  const { settled, verdicts } = await acceptEvents(ctx, accepted);
  // Each event is a unit of its session's ingest limit; a request none of whose events was let in is refused whole.
  const tightest = verdicts.reduce<Verdict | null>((m, v) => (m === null || v.remaining < m.remaining ? v : m), null);
  if (tightest) limitHeaders(c, tightest);
  const limited = (r: PromiseSettledResult<EventAck>) =>
    r.status === 'rejected' && r.reason instanceof AppError && r.reason.code === 'rate_limited';
  if (settled.length > 0 && settled.every(limited)) throw (settled[0] as PromiseRejectedResult).reason as AppError;
  let next = 0;
  const results = parsed.map(({ eventId, event, error }): BatchResult => {
    const outcome: PromiseSettledResult<EventAck> = event ? settled[next++]! : { status: 'rejected', reason: error };
    if (outcome.status === 'fulfilled') return { event_id: eventId, ...outcome.value };
    const err: unknown = outcome.reason;
    if (err instanceof AppError) return { event_id: eventId, error: { code: err.code, message: err.message } };
    log('error', 'batch event failed', { event_id: eventId, message: errorText(err) });
    return {
      event_id: eventId,
      error: { code: 'internal_error', message: 'This event could not be accepted; send it again later.' },
    };
  });
  return c.json({ results }, 200);
});

/** The caller's session row, or 404 alike for other teams' sessions and projects the caller cannot see. */
async function visibleSession(c: Context<AppEnv>, key: string): Promise<void> {
  const auth = c.get('auth');
  if ((await findVisibleSession(await teamDb(c.env, auth.teamId), auth, key)) === undefined) throw notFound('session');
}

/** Re-queues a session's dead letters with a fresh retry budget; answers how many went back. */
sessionRoutes.post('/:id/dead-letters/retry', async (c) => {
  const key = c.req.param('id');
  await visibleSession(c, key);
  const requeued = await sessionStub(c.env, c.get('auth').teamId, key).retryDeadLetters();
  return c.json({ session_id: key, requeued });
});

/** Progress of a session's observer. Sessions of other teams, or in projects the caller cannot see, do not exist. */
sessionRoutes.get('/:id/status', async (c) => {
  const auth = c.get('auth');
  const key = c.req.param('id');
  await visibleSession(c, key);
  const status = await sessionStub(c.env, auth.teamId, key).status();
  return c.json({ session_id: key, ...status });
});
