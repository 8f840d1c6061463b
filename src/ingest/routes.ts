// Ingest API: session events from the hooks client, answered at once and handed to the SessionDO.
import { Hono } from 'hono';
import type { Context } from 'hono';
import { findVisibleSession } from '../db/sessions';
import { settingsFor } from '../db/team-settings';
import type { AppEnv } from '../auth/types';
import { AppError, notFound } from '../lib/errors';
import { limiterStub } from '../limits/limiter-do';
import { limitFor } from '../limits/rate-limit';
import { jsonBody, parseWith } from '../lib/validate';
import { sessionStub } from '../session/session-do';
import { acceptEvent, type IngestContext } from './accept';
import { EVENT_SCHEMAS, EventBatch, EndEvent, InitEvent, ObservationEvent, SummarizeEvent, type IngestEvent } from './schemas';
import type { BatchResult, EventAck } from '#shared/events';

/** Mounted at /api/sessions: writes need the `ingest` scope, reads `ingest` or `read` (guards in src/app.ts). */
export const sessionRoutes = new Hono<AppEnv>();
/** Mounted at /api/events (scope `ingest`). */
export const eventRoutes = new Hono<AppEnv>();

async function context(c: Context<AppEnv>): Promise<IngestContext> {
  const auth = c.get('auth');
  return { env: c.env, auth, settings: await settingsFor(c.env.DB, auth), now: Date.now() };
}

for (const [path, schema] of [
  ['/init', InitEvent],
  ['/observations', ObservationEvent],
  ['/summarize', SummarizeEvent],
  ['/end', EndEvent],
] as const) {
  sessionRoutes.post(path, jsonBody(schema), async (c) => {
    const event = c.req.valid('json') as IngestEvent;
    const ack = await acceptEvent(await context(c), event);
    return c.json(ack, 202);
  });
}


/** Spool replay: events are taken in order, each answered on its own; one bad event does not stop the rest. */
eventRoutes.post('/batch', jsonBody(EventBatch), async (c) => {
  const { events } = c.req.valid('json');
  const ctx = await context(c);
  // Each event is a unit of the ingest limit: the request paid for the first, the rest are granted while the
  // window lasts; events past it are answered rate_limited one by one (the client retries exactly those).
  const allowed = 1 + (await chargeExtraEvents(c, events.length - 1));
  const results: BatchResult[] = [];
  for (const [i, raw] of events.entries()) {
    const rec = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
    const eventId = typeof rec.event_id === 'string' ? rec.event_id : null;
    if (i >= allowed) {
      results.push({ event_id: eventId, error: { code: 'rate_limited', message: 'Over this token\'s ingest limit for this minute; send it again later.' } });
      continue;
    }
    try {
      const kind = rec.kind;
      if (kind !== 'init' && kind !== 'observation' && kind !== 'summarize' && kind !== 'end') {
        throw new AppError(400, 'invalid_body', 'kind: must be one of init, observation, summarize, end');
      }
      const event = parseWith(EVENT_SCHEMAS[kind], rec, 'invalid_body') as IngestEvent;
      results.push({ event_id: eventId, ...(await acceptEvent(ctx, event)) });
    } catch (err) {
      if (err instanceof AppError) results.push({ event_id: eventId, error: { code: err.code, message: err.message } });
      else {
        console.error('batch event failed', { eventId, message: (err as Error).message });
        results.push({ event_id: eventId, error: { code: 'internal_error', message: 'This event could not be accepted; send it again later.' } });
      }
    }
  }
  return c.json({ results }, 200);
});

/** Charges the extra events of a batch to the token's ingest window; answers how many were granted. */
async function chargeExtraEvents(c: Context<AppEnv>, extra: number): Promise<number> {
  if (extra <= 0) return 0;
  const auth = c.get('auth');
  try {
    const { verdict, granted } = await limiterStub(c.env, auth.tokenId).hitUpTo('ingest', limitFor(c.env, auth, 'ingest'), extra);
    c.header('x-ratelimit-remaining', String(verdict.remaining));
    return granted;
  } catch (err) {
    // Like the middleware: a limiter outage fails open.
    console.error('rate limiter unavailable', { message: err instanceof Error ? err.message : String(err) });
    return extra;
  }
}

/** The caller's session row, or 404 alike for other teams' sessions and projects the caller cannot see. */
async function visibleSession(c: Context<AppEnv>, key: string): Promise<void> {
  const auth = c.get('auth');
  if ((await findVisibleSession(c.env.DB, auth, key)) === undefined) throw notFound('session');
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
