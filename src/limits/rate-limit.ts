// Per-token rate limits: ingest and read counted separately, one LimiterDO per token.
import type { MiddlewareHandler } from 'hono';
import type { AppEnv, AuthContext } from '../auth/types';
import { configOf, type ConfigInput } from '../config';
import { AppError } from '../lib/errors';
import { limiterStub, type Bucket } from './limiter-do';


/** Hook traffic goes to the ingest bucket; recall, search, MCP, viewer and admin calls to the read bucket. */
export function bucketFor(method: string, path: string): Bucket {
  if (path.startsWith('/api/events/')) return 'ingest';
  if (path.startsWith('/api/sessions/') && method !== 'GET') return 'ingest';
  return 'read';
}

/** The server's limit for the bucket, lowered (never raised) by the team's own setting. */
export function limitFor(env: ConfigInput, auth: Pick<AuthContext, 'settings'>, bucket: Bucket): number {
  const server = configOf(env).rateLimits[bucket];
  const team = bucket === 'ingest' ? auth.settings?.rate_limit_ingest_per_min : auth.settings?.rate_limit_read_per_min;
  return team ? Math.min(team, server) : server;
}

export const rateLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  const auth = c.get('auth');
  const bucket = bucketFor(c.req.method, c.req.path);
  const limit = limitFor(c.env, auth, bucket);
  let verdict;
  try {
    const stub = limiterStub(c.env, auth.tokenId);
    verdict = await stub.hit(bucket, limit);
  } catch (err) {
    // A limiter outage must not take the API down with it: fail open and say so in the logs.
    console.error('rate limiter unavailable', { message: err instanceof Error ? err.message : String(err) });
  }
  if (verdict) {
    c.header('x-ratelimit-limit', String(verdict.limit));
    c.header('x-ratelimit-remaining', String(verdict.remaining));
    if (!verdict.allowed) {
      const seconds = Math.max(1, Math.ceil(verdict.retryAfterMs / 1000));
      throw new AppError(429, 'rate_limited', `Too many ${bucket} requests for this token; retry in ${seconds}s.`, {
        'retry-after': String(seconds),
      });
    }
  }
  await next();
};
