// Per-token rate limits (ingest and read counted separately). Placeholder until the teams work lands.
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../env';

export const rateLimit: MiddlewareHandler<AppEnv> = async (_c, next) => {
  await next();
};
