// Per-token rate limits: ingest and read counted separately, one LimiterDO per token. The event routes are
// counted per session by the SessionDO instead, in the call that takes the event (src/session/admission.ts).
import type { Context, MiddlewareHandler } from 'hono';
import { endTime, startTime } from 'hono/timing';
import type { AppEnv, AuthContext } from '../auth/types';
import { configOf, type ConfigInput } from '../config';
import { AppError } from '../lib/errors';
import { limiterStub, type Bucket } from './limiter-do';
import type { Verdict } from './window';
import { errorText, log } from '../lib/log';

/** Hook traffic and priming go to the ingest bucket; recall, search, MCP, viewer and admin calls to the read bucket. */
export function bucketFor(method: string, path: string): Bucket {
  if (path.startsWith('/api/events/') || path === '/api/prime') return 'ingest';
  if (path.startsWith('/api/sessions/') && method !== 'GET') return 'ingest';
  return 'read';
}

/** The server's limit for the bucket, lowered (never raised) by the team's own setting. */
export function limitFor(env: ConfigInput, auth: Pick<AuthContext, 'settings'>, bucket: Bucket): number {
  const server = configOf(env).rateLimits[bucket];
  const team = bucket === 'ingest' ? auth.settings?.rate_limit_ingest_per_min : auth.settings?.rate_limit_read_per_min;
  return team ? Math.min(team, server) : server;
}

/** The 429 every limit answers with (per-token limiter here, per-session ingest in the SessionDO). */
export function rateLimited(what: string, verdict: Verdict): AppError {
  const seconds = Math.max(1, Math.ceil(verdict.retryAfterMs / 1000));
  return new AppError(429, 'rate_limited', `Too many ${what}; retry in ${seconds}s.`, {
    'retry-after': String(seconds),
  });
}

/** Event routes: their limit is counted by the SessionDO the events go to, in the same round trip. */
export const countedBySession = (method: string, path: string) =>
  method === 'POST' &&
  (path === '/api/events/batch' || /^\/api\/sessions\/(init|observations|summarize|end)$/.test(path));

/** Rate-limit headers from a verdict. */
export function limitHeaders(c: Context, verdict: Verdict): void {
  c.header('x-ratelimit-limit', String(verdict.limit));
  c.header('x-ratelimit-remaining', String(verdict.remaining));
}

export const rateLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (countedBySession(c.req.method, c.req.path)) return next();
  const auth = c.get('auth');
  const bucket = bucketFor(c.req.method, c.req.path);
  const limit = limitFor(c.env, auth, bucket);
  let verdict;
  try {
    const stub = limiterStub(c.env, auth.tokenId);
    startTime(c, 'limit', 'rate limiter');
    verdict = await stub.hit(bucket, limit);
    endTime(c, 'limit');
  } catch (err) {
    // A limiter outage must not take the API down with it: fail open and say so in the logs.
    log('error', 'rate limiter unavailable', { message: errorText(err) });
  }
  if (verdict) {
    limitHeaders(c, verdict);
    if (!verdict.allowed) throw rateLimited(`${bucket} requests for this token`, verdict);
  }
  await next();
};
